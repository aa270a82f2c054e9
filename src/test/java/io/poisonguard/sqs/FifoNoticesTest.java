package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Issue 11: with {@code notices.fifo=true} the notices queue is {@code <prefix>-notices.fifo} and a notice
 * sent again for the same job (a worker died after sending, before its attempt's end was written) is
 * absorbed by SQS's deduplication; another job's notice is not.
 */
class FifoNoticesTest {
    @Test
    void aNoticeSentTwiceForOneJobReachesTheFifoQueueOnce() {
        SqsClient sqs = EmulatorClients.sqs(Emulators.shared());
        Names names = new Names("fifo" + UUID.randomUUID().toString().substring(0, 6), true);
        new QueueBootstrap(sqs, names).ensureQueues(Duration.ofDays(4), Duration.ofSeconds(30), 100);
        String url = sqs.getQueueUrl(b -> b.queueName(names.noticesQueue())).queueUrl();
        assertEquals("true", sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.FIFO_QUEUE))
                .attributes().get(QueueAttributeName.FIFO_QUEUE));

        SqsNoticePublisher publisher = new SqsNoticePublisher(sqs, new QueueUrls(sqs, names), names, Duration.ofMillis(5), 4);
        publisher.publish("job-1", "tenant-a", "permit-report", "{\"jobId\":\"job-1\",\"attempt\":1}");
        publisher.publish("job-1", "tenant-a", "permit-report", "{\"jobId\":\"job-1\",\"attempt\":2}");
        publisher.publish("job-2", "tenant-a", "permit-report", "{\"jobId\":\"job-2\",\"attempt\":1}");

        List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)).messages();
        assertEquals(List.of("{\"jobId\":\"job-1\",\"attempt\":1}", "{\"jobId\":\"job-2\",\"attempt\":1}"),
                got.stream().map(Message::body).sorted().toList(), "the second send for job-1 was deduplicated");
    }

    @Test
    void theDeduplicationIdSeparatesTenantsAndEffects() {
        String id = SqsNoticePublisher.deduplicationId("tenant-a", "job-1", "completion-notice");
        assertEquals(64, id.length());
        assertEquals(id, SqsNoticePublisher.deduplicationId("tenant-a", "job-1", "completion-notice"));
        assertNotEquals(id, SqsNoticePublisher.deduplicationId("tenant-b", "job-1", "completion-notice"));
        assertNotEquals(id, SqsNoticePublisher.deduplicationId("tenant-a", "job-1", "another-effect"));
    }
}

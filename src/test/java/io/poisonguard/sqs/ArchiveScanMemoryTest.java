package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.replay.ArchiveScan;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequest;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchResponse;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageRequest;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replay's scan of a deep dead-letter queue (the vault off, or a payload it lacks) looks at up to 5,000 messages. It
 * must hold only what it needs to give the others back (their receipt handles), not their bodies: 5,000 poison messages
 * of 200 KB each are a gigabyte, and a worker's heap is a few hundred megabytes.
 */
class ArchiveScanMemoryTest {
    static final int BODY_CHARS = 200_000;

    /** A DLQ of distinct large messages, none of them the job looked for; it checks, while the scan goes on, what it still holds. */
    static final class DeepDeadLetters implements SqsClient {
        final List<WeakReference<Message>> early = new ArrayList<>();
        int rounds;
        boolean earlyCollected;
        int givenBack;

        @Override
        public GetQueueUrlResponse getQueueUrl(GetQueueUrlRequest r) {
            return GetQueueUrlResponse.builder().queueUrl("http://sqs.local/" + r.queueName()).build();
        }

        @Override
        public ReceiveMessageResponse receiveMessage(ReceiveMessageRequest r) {
            rounds++;
            if (rounds == 30) {
                for (int i = 0; i < 20 && !earlyCollected; i++) {
                    System.gc();
                    earlyCollected = early.stream().allMatch(w -> w.get() == null);
                }
            }
            if (rounds > 40) {
                return ReceiveMessageResponse.builder().messages(List.of()).build();
            }
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                String id = "m" + rounds + "-" + i;
                Message m = Message.builder().messageId(id).receiptHandle("receipt-" + id).body("x".repeat(BODY_CHARS) + id)
                        .messageAttributes(Map.of("job-id", MessageAttributeValue.builder().dataType("String").stringValue("other-" + id).build()))
                        .build();
                if (rounds <= 2) {
                    early.add(new WeakReference<>(m));
                }
                batch.add(m);
            }
            return ReceiveMessageResponse.builder().messages(batch).build();
        }

        @Override
        public ChangeMessageVisibilityBatchResponse changeMessageVisibilityBatch(ChangeMessageVisibilityBatchRequest r) {
            givenBack += r.entries().size();
            return ChangeMessageVisibilityBatchResponse.builder().build();
        }

        @Override
        public String serviceName() {
            return "sqs";
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aScanKeepsOnlyTheReceiptHandlesOfTheMessagesItGivesBack() {
        DeepDeadLetters sqs = new DeepDeadLetters();
        SqsPayloadArchive archive = new SqsPayloadArchive(sqs, new QueueUrls(sqs, new Names("scan")));

        ArchiveScan scan = archive.find(JobKey.of("acme", "wanted"));

        assertTrue(scan.copies().isEmpty());
        assertTrue(sqs.rounds >= 30, "the scan went on past the check");
        assertTrue(sqs.earlyCollected, "the first rounds' messages (bodies of 200 KB each) were still held 28 rounds later");
        assertEquals(400, sqs.givenBack, "every message it looked at was given back");
    }
}

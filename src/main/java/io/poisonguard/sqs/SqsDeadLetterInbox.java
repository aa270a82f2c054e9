package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.quarantine.DeadLetterInbox;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The DLQ as the dead-letter intake reads it: with every message attribute and the receive count. */
@ApplicationScoped
public class SqsDeadLetterInbox implements DeadLetterInbox {
    private final SqsClient sqs;
    private final QueueUrls urls;
    private final Clock clock;
    private final LongPoll longPoll;

    public SqsDeadLetterInbox(SqsClient sqs, QueueUrls urls, Clock clock) {
        this.sqs = sqs;
        this.urls = urls;
        this.clock = clock;
        this.longPoll = LongPoll.of(sqs);
    }

    @Override
    public List<InboundMessage> receive(int max, Duration hold) {
        // A 1 s long poll asks every SQS server (a short poll samples some), so a sweep does not stop early.
        return sqs.receiveMessage(b -> b.queueUrl(urls.deadLetter()).maxNumberOfMessages(Math.min(10, max)).waitTimeSeconds(1).overrideConfiguration(longPoll.bounded(1))
                        .visibilityTimeout((int) hold.toSeconds()).messageAttributeNames("All")
                        .messageSystemAttributeNames(MessageSystemAttributeName.SENT_TIMESTAMP, MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT))
                .messages().stream().map(m -> SqsJobQueue.toDomain(m, clock.instant())).toList();
    }

    @Override
    public void delete(InboundMessage m) {
        sqs.deleteMessage(b -> b.queueUrl(urls.deadLetter()).receiptHandle(m.receiptHandle()));
    }

    @Override
    public void returnToSource(String body, java.util.Map<String, io.poisonguard.admission.MessageAttribute> attributes) {
        sqs.sendMessage(b -> b.queueUrl(urls.jobs()).messageBody(body).messageAttributes(SqsJobQueue.toSdk(attributes)));
    }

    @Override
    public void release(List<InboundMessage> messages) {
        for (int i = 0; i < messages.size(); i += 10) {
            List<InboundMessage> chunk = messages.subList(i, Math.min(messages.size(), i + 10));
            List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>();
            for (int j = 0; j < chunk.size(); j++) {
                entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id("r" + j).receiptHandle(chunk.get(j).receiptHandle())
                        .visibilityTimeout(0).build());
            }
            sqs.changeMessageVisibilityBatch(b -> b.queueUrl(urls.deadLetter()).entries(entries));
        }
    }
}

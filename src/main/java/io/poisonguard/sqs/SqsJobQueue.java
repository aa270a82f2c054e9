package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.pipeline.SourceQueue;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The main queue over SQS. Deletes are buffered and sent ten at a time (DeleteMessageBatch's limit)
 * by a background flusher; a delete that fails only means the copy comes back and is dropped as a
 * duplicate of a finished job.
 */
@Singleton
public class SqsJobQueue implements SourceQueue {
    private static final Logger LOG = Logger.getLogger(SqsJobQueue.class);
    private static final int BATCH = 10;
    private static final Duration LINGER = Duration.ofMillis(50);

    private final SqsClient sqs;
    private final QueueUrls urls;
    private final Clock clock;
    private final LinkedBlockingQueue<String> pendingDeletes;
    private final Thread flusher;
    private final LongPoll longPoll;
    private volatile boolean open = true;

    @jakarta.inject.Inject
    public SqsJobQueue(SqsClient sqs, QueueUrls urls, Clock clock) {
        this(sqs, urls, clock, new LinkedBlockingQueue<>());
    }

    /** With the queue the deletes wait in: a test's, to stop a delete between its check and its queueing. */
    SqsJobQueue(SqsClient sqs, QueueUrls urls, Clock clock, LinkedBlockingQueue<String> pendingDeletes) {
        this.pendingDeletes = pendingDeletes;
        // The client itself, not its CDI proxy: every call on the hot path would otherwise look the bean up again.
        this.sqs = io.quarkus.arc.ClientProxy.unwrap(sqs);
        this.longPoll = LongPoll.of(this.sqs);
        this.urls = urls;
        this.clock = clock;
        this.flusher = Thread.ofVirtual().name("poison-guard-delete-flusher").start(this::flushLoop);
    }

    @Override
    public List<InboundMessage> receive(int max, Duration wait, Duration visibility) {
        List<Message> messages = sqs.receiveMessage(b -> b.queueUrl(urls.jobs())
                .maxNumberOfMessages(max)
                .waitTimeSeconds((int) wait.toSeconds())
                .overrideConfiguration(longPoll.bounded((int) wait.toSeconds()))
                .visibilityTimeout((int) visibility.toSeconds())
                .messageAttributeNames("All")
                .messageSystemAttributeNames(MessageSystemAttributeName.SENT_TIMESTAMP,
                        MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT)).messages();
        Instant now = clock.instant();
        return messages.stream().map(m -> toDomain(m, now)).toList();
    }

    static InboundMessage toDomain(Message m, Instant receivedAt) {
        Map<String, MessageAttribute> attrs = new HashMap<>();
        m.messageAttributes().forEach((k, v) -> attrs.put(k, new MessageAttribute(v.dataType(), v.stringValue(),
                v.binaryValue() == null ? null : v.binaryValue().asByteArray())));
        String sent = m.attributes().get(MessageSystemAttributeName.SENT_TIMESTAMP);
        String count = m.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT);
        return new InboundMessage(m.messageId(), m.receiptHandle(), m.body(), attrs,
                sent == null ? receivedAt : Instant.ofEpochMilli(Long.parseLong(sent)),
                count == null ? 1 : Integer.parseInt(count), receivedAt);
    }

    static Map<String, MessageAttributeValue> toSdk(Map<String, MessageAttribute> attrs) {
        Map<String, MessageAttributeValue> out = new HashMap<>();
        attrs.forEach((k, v) -> {
            MessageAttributeValue.Builder b = MessageAttributeValue.builder().dataType(v.dataType());
            if (v.binaryValue() != null) {
                b.binaryValue(SdkBytes.fromByteArray(v.binaryValue()));
            } else {
                b.stringValue(v.stringValue());
            }
            out.put(k, b.build());
        });
        return out;
    }

    @Override
    public void delete(InboundMessage message) {
        String receipt = message.receiptHandle();
        if (open) {
            pendingDeletes.add(receipt);
            // flush() may have closed and drained between the check and the add: a receipt still queued then is this
            // call's to send (whichever of the two takes it out sends it, once).
            if (!open && pendingDeletes.remove(receipt)) {
                sendBatch(List.of(receipt));
            }
        } else {
            sendBatch(List.of(receipt));
        }
    }

    @Override
    public void changeVisibility(InboundMessage message, Duration delay) {
        sqs.changeMessageVisibility(b -> b.queueUrl(urls.jobs()).receiptHandle(message.receiptHandle())
                .visibilityTimeout((int) Math.max(0, delay.toSeconds())));
    }

    /**
     * Stops the background flusher, waits for the batch it may be sending, and sends what is left,
     * while the SQS client is still open. Later deletes are sent one by one.
     */
    @Override
    public void flush() {
        open = false;
        try {
            flusher.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<String> batch = new ArrayList<>();
        while (pendingDeletes.drainTo(batch, BATCH) > 0) {
            sendBatch(batch);
            batch.clear();
        }
    }

    /**
     * Sends the deletes in batches of up to ten: the first delete of a round waits {@link #LINGER} for company (at
     * once if nine more are already queued), then everything queued goes out, in full batches, and a partial rest
     * leads the next round. One wait per round, not one per delete: on a virtual thread every timed wait arms and
     * cancels a timer on the JDK's delay scheduler, and waiting for each next delete cost about one timer per message
     * under a backlog. A delete is not urgent (the message stays invisible for its visibility timeout, and a copy
     * delivered again is a duplicate the ledger drops), so waiting the linger out is harmless.
     */
    private void flushLoop() {
        List<String> batch = new ArrayList<>(BATCH);
        while (open || !pendingDeletes.isEmpty()) {
            try {
                String first = pendingDeletes.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                if (open && pendingDeletes.size() < BATCH - 1) {
                    Thread.sleep(LINGER);
                }
                pendingDeletes.drainTo(batch, BATCH - 1);
                sendBatch(batch);
                batch.clear();
                while (pendingDeletes.size() >= BATCH) {
                    pendingDeletes.drainTo(batch, BATCH);
                    sendBatch(batch);
                    batch.clear();
                }
            } catch (InterruptedException e) {
                // Back to the queue, for flush() to send.
                pendingDeletes.addAll(batch);
                Thread.currentThread().interrupt();
                return;
            } catch (Error e) {
                // An OutOfMemoryError while a batch was sent (the SDK reading an answer) must not end the flusher for the
                // life of the process: the deletes would pile up here while every completed copy came back. The batch
                // goes back to the queue and is sent again (a delete sent twice is harmless).
                pendingDeletes.addAll(batch);
                LOG.errorf("The delete flusher met %s; it goes on", e.getClass().getSimpleName());
                pauseAfterError();
            } finally {
                batch.clear();
            }
        }
    }

    /** A short pause before the flusher goes on after an Error, so one that repeats does not spin a core. */
    private static void pauseAfterError() {
        java.util.concurrent.locks.LockSupport.parkNanos(ERROR_PAUSE.toNanos());
    }

    private static final Duration ERROR_PAUSE = Duration.ofMillis(200);

    private void sendBatch(List<String> receipts) {
        List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < receipts.size(); i++) {
            entries.add(DeleteMessageBatchRequestEntry.builder().id("d" + i).receiptHandle(receipts.get(i)).build());
        }
        try {
            DeleteMessageBatchResponse r = sqs.deleteMessageBatch(b -> b.queueUrl(urls.jobs()).entries(entries));
            if (r.hasFailed() && !r.failed().isEmpty()) {
                LOG.warnf("%d of %d deletes failed (the copies will come back and be dropped as duplicates): %s",
                        r.failed().size(), entries.size(), r.failed().get(0).code());
            }
        } catch (SqsException e) {
            LOG.warnf("DeleteMessageBatch failed for %d messages (they will come back and be dropped as duplicates): %s",
                    entries.size(), e.awsErrorDetails() == null ? e.getMessage() : e.awsErrorDetails().errorCode());
        } catch (RuntimeException e) {
            LOG.warnf("DeleteMessageBatch failed for %d messages (they will come back and be dropped as duplicates): %s",
                    entries.size(), e.getClass().getSimpleName());
        }
    }

    @PreDestroy
    void close() {
        flush();
    }
}

package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.replay.ArchiveScan;
import io.poisonguard.replay.ArchivedMessage;
import io.poisonguard.replay.PayloadArchive;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Finds a job's copies in the dead-letter queue by receiving and looking at the {@code job-id}
 * attribute, hiding what it holds for {@link #HOLD_SECONDS} and giving everything else back at once.
 * Cost grows with the DLQ's depth: fine for an operator action, not for a hot path.
 */
@ApplicationScoped
public class SqsPayloadArchive implements PayloadArchive {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(SqsPayloadArchive.class);
    static final int HOLD_SECONDS = 60;
    /** Upper bound on receives per scan (10 messages each): a deeper DLQ makes the scan partial. */
    static final int MAX_ROUNDS = 500;
    /** Consecutive empty short polls before a quick scan stops. */
    static final int QUICK_EMPTY_RECEIVES = 3;

    private final SqsClient sqs;
    private final QueueUrls urls;
    private final LongPoll longPoll;
    private final java.util.concurrent.locks.ReentrantLock scan = new java.util.concurrent.locks.ReentrantLock(true);

    public SqsPayloadArchive(SqsClient sqs, QueueUrls urls) {
        this.sqs = sqs;
        this.urls = urls;
        this.longPoll = LongPoll.of(sqs);
    }

    @Override
    public boolean someHidden() {
        String hidden = sqs.getQueueAttributes(b -> b.queueUrl(urls.deadLetter())
                .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes()
                .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE);
        return hidden != null && Long.parseLong(hidden) > 0;
    }

    /**
     * One scan at a time per process: two concurrent scans would hide each other's messages. Fair, so an operator's action is
     * not starved by the background clean-up's scans.
     */
    @Override
    public ArchiveScan find(JobKey key) {
        scan.lock();
        try {
            Scanned quick = scan(Set.of(key), 0, QUICK_EMPTY_RECEIVES, true);
            // Short polls sample only some SQS servers; before answering "none", look again with a long
            // poll, which asks them all. Only the not-found case pays for it.
            Scanned sure = quick.found().isEmpty() ? scan(Set.of(key), 1, 1, true) : quick;
            return new ArchiveScan(sure.found().getOrDefault(key, List.of()), sure.complete());
        } finally {
            scan.unlock();
        }
    }

    /** One pass through the queue for every key at once: what the background clean-up of many replays shares. */
    @Override
    public Map<JobKey, List<ArchivedMessage>> takeAll(Collection<JobKey> keys) {
        if (keys.isEmpty()) {
            return Map.of();
        }
        scan.lock();
        try {
            // Without their bodies: the clean-up needs only a copy's receipt and generation, and a sweep of many jobs in a deep
            // queue must not hold their payloads.
            Scanned quick = scan(Set.copyOf(keys), 0, QUICK_EMPTY_RECEIVES, false);
            return quick.found().isEmpty() ? scan(Set.copyOf(keys), 1, 1, false).found() : quick.found();
        } finally {
            scan.unlock();
        }
    }

    /** What one scan found, by job, and whether it looked at every message. */
    private record Scanned(Map<JobKey, List<ArchivedMessage>> found, boolean complete) {
    }

    /** Complete when the queue ran dry or came round again; partial when it stopped at {@link #MAX_ROUNDS}. */
    private Scanned scan(Set<JobKey> keys, int waitSeconds, int emptiesToStop, boolean bodies) {
        String url = urls.deadLetter();
        Map<JobKey, List<ArchivedMessage>> found = new HashMap<>();
        // Only the receipt handles of what is given back: a deep DLQ of large messages would not fit in the heap whole.
        List<String> others = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        boolean complete = false;
        try {
            int empty = 0;
            for (int round = 0; round < MAX_ROUNDS && !complete; round++) {
                List<Message> batch = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(waitSeconds)
                        .overrideConfiguration(longPoll.bounded(waitSeconds))
                        .visibilityTimeout(HOLD_SECONDS).messageAttributeNames("All")).messages();
                if (batch.isEmpty()) {
                    complete = ++empty >= emptiesToStop;
                    continue;
                }
                empty = 0;
                boolean wrapped = false;
                for (Message m : batch) {
                    // Seen before in this scan: the queue came round (its hold ran out). Held once, by its newest receipt: SQS
                    // deletes a message re-received only by the receipt it was last received with.
                    boolean again = !seen.add(m.messageId());
                    wrapped |= again;
                    InboundMessage domain = SqsJobQueue.toDomain(m, Instant.EPOCH);
                    // Another tenant's job with the same id is not this job: its copy is never taken for this one's.
                    // By the identity the intake gives it (the job-id attribute, else the body's jobId, else the MessageId): an
                    // original kept in the DLQ as it came (its labelled copy refused) may carry no job-id attribute.
                    JobKey of = JobKey.of(domain.attribute(WireAttributes.TENANT).orElse(null),
                            io.poisonguard.admission.JobIdentity.of(domain).jobId());
                    if (keys.contains(of)) {
                        List<ArchivedMessage> copies = found.computeIfAbsent(of, k -> new ArrayList<>());
                        if (again) {
                            copies.removeIf(c -> c.messageId().equals(m.messageId()));
                        }
                        copies.add(new ArchivedMessage(m.messageId(), m.receiptHandle(), bodies ? m.body() : "", domain.attributes()));
                    } else {
                        others.add(m.receiptHandle());
                    }
                }
                complete = wrapped;
            }
        } catch (RuntimeException e) {
            // What was found is not handed over: shown again now rather than hidden for the rest of the hold.
            found.values().forEach(copies -> copies.forEach(c -> others.add(c.receiptHandle())));
            throw e;
        } finally {
            giveBack(url, others);
        }
        return new Scanned(found, complete);
    }

    @Override
    public int delete(List<ArchivedMessage> copies) {
        String url = urls.deadLetter();
        int deleted = 0;
        for (int i = 0; i < copies.size(); i += 10) {
            List<ArchivedMessage> chunk = copies.subList(i, Math.min(copies.size(), i + 10));
            List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
            for (int j = 0; j < chunk.size(); j++) {
                entries.add(DeleteMessageBatchRequestEntry.builder().id("d" + j).receiptHandle(chunk.get(j).receiptHandle()).build());
            }
            DeleteMessageBatchResponse r = sqs.deleteMessageBatch(b -> b.queueUrl(url).entries(entries));
            deleted += r.hasSuccessful() ? r.successful().size() : 0;
            if (r.hasFailed()) {
                for (BatchResultErrorEntry f : r.failed()) {
                    ArchivedMessage copy = chunk.get(Integer.parseInt(f.id().substring(1)));
                    LOG.warnf("Dead-letter message %s was not deleted (%s); it stays in the DLQ, stale if it is ever received",
                            copy.messageId(), f.code());
                }
            }
        }
        return deleted;
    }

    @Override
    public void release(List<ArchivedMessage> copies) {
        giveBack(urls.deadLetter(), copies.stream().map(ArchivedMessage::receiptHandle).toList());
    }

    private void giveBack(String url, List<String> receipts) {
        for (int i = 0; i < receipts.size(); i += 10) {
            List<String> chunk = receipts.subList(i, Math.min(receipts.size(), i + 10));
            List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>();
            for (int j = 0; j < chunk.size(); j++) {
                entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id("v" + j).receiptHandle(chunk.get(j)).visibilityTimeout(0).build());
            }
            sqs.changeMessageVisibilityBatch(b -> b.queueUrl(url).entries(entries));
        }
    }
}

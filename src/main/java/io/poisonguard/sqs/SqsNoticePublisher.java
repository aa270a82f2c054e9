package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.pipeline.NoticePublisher;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.util.Map;

/**
 * Completion notices on the notices queue, each carrying the job's {@code job-id}. Notices of jobs finishing
 * at the same time share one SendMessageBatch ({@link SendBatcher}): under load about a tenth of the
 * requests, and no added wait when idle. {@link #publish} still returns only once SQS accepted this notice.
 */
@Singleton
public class SqsNoticePublisher implements NoticePublisher {
    private final boolean fifo;
    private final SendBatcher batcher;

    @jakarta.inject.Inject
    public SqsNoticePublisher(SqsClient sqs, QueueUrls urls, Names names, io.poisonguard.config.PoisonGuardConfig config) {
        this(io.quarkus.arc.ClientProxy.unwrap(sqs), urls, names, config.notices().batchLinger(), config.notices().batchesInFlight());
    }

    /** {@code inFlight}: batches that may be on the wire at once. */
    public SqsNoticePublisher(SqsClient sqs, QueueUrls urls, Names names, java.time.Duration linger, int inFlight) {
        this.fifo = names.fifoNotices();
        this.batcher = new SendBatcher(sqs, urls::notices, inFlight, linger, "poison-guard-notice-sender");
    }

    @Override
    public void publish(String jobId, String tenant, String jobType, String body) {
        SendMessageBatchRequestEntry.Builder b = SendMessageBatchRequestEntry.builder().messageBody(body).messageAttributes(SqsJobQueue.toSdk(Map.of(
                WireAttributes.JOB_ID, MessageAttribute.string(jobId),
                WireAttributes.TENANT, MessageAttribute.string(tenant),
                WireAttributes.JOB_TYPE, MessageAttribute.string(jobType))));
        if (fifo) {
            // One group per job keeps notices of different jobs independent; the deduplication id is
            // the same for every send of this job's notice, so SQS keeps only the first.
            String id = deduplicationId(tenant, jobId, NOTICE);
            b.messageGroupId(id).messageDeduplicationId(id);
        }
        try {
            batcher.send(b);
        } catch (InterruptedException e) {
            // The handler was cut off (its deadline, shutdown) while its notice waited: not recorded as sent.
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the completion notice of job " + jobId + " was being sent", e);
        }
    }

    @PreDestroy
    void close() {
        batcher.close();
    }

    static final String NOTICE = "completion-notice";

    /** SHA-256 of tenant, job id and effect name, hex (64 characters, within SQS's 128 and its character set). */
    static String deduplicationId(String tenant, String jobId, String effect) {
        try {
            java.security.MessageDigest d = java.security.MessageDigest.getInstance("SHA-256");
            for (String part : new String[]{tenant == null ? "" : tenant, jobId, effect}) {
                d.update(part.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                d.update((byte) 0);
            }
            return java.util.HexFormat.of().formatHex(d.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.pipeline.NoticePublisher;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.util.Map;

/** Completion notices on the notices queue, each carrying the job's {@code job-id}. */
@ApplicationScoped
public class SqsNoticePublisher implements NoticePublisher {
    private final SqsClient sqs;
    private final QueueUrls urls;
    private final boolean fifo;

    public SqsNoticePublisher(SqsClient sqs, QueueUrls urls, Names names) {
        this.sqs = sqs;
        this.urls = urls;
        this.fifo = names.fifoNotices();
    }

    @Override
    public void publish(String jobId, String tenant, String jobType, String body) {
        sqs.sendMessage(b -> {
            b.queueUrl(urls.notices()).messageBody(body).messageAttributes(SqsJobQueue.toSdk(Map.of(
                    WireAttributes.JOB_ID, MessageAttribute.string(jobId),
                    WireAttributes.TENANT, MessageAttribute.string(tenant),
                    WireAttributes.JOB_TYPE, MessageAttribute.string(jobType))));
            if (fifo) {
                // One group per job keeps notices of different jobs independent; the deduplication id is
                // the same for every send of this job's notice, so SQS keeps only the first.
                b.messageGroupId(deduplicationId(tenant, jobId, NOTICE)).messageDeduplicationId(deduplicationId(tenant, jobId, NOTICE));
            }
        });
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

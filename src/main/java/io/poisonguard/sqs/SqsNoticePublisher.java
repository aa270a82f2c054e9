package io.poisonguard.sqs;

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

    public SqsNoticePublisher(SqsClient sqs, QueueUrls urls) {
        this.sqs = sqs;
        this.urls = urls;
    }

    @Override
    public void publish(String jobId, String tenant, String jobType, String body) {
        sqs.sendMessage(b -> b.queueUrl(urls.notices()).messageBody(body).messageAttributes(SqsJobQueue.toSdk(Map.of(
                WireAttributes.JOB_ID, MessageAttribute.string(jobId),
                WireAttributes.TENANT, MessageAttribute.string(tenant),
                WireAttributes.JOB_TYPE, MessageAttribute.string(jobType)))));
    }
}

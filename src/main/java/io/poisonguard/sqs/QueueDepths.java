package io.poisonguard.sqs;

import io.poisonguard.observability.QueueDepthSource;

import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.util.Map;

/** Approximate depth (visible + in flight + delayed) of the main and dead-letter queues, for gauges. */
@ApplicationScoped
public class QueueDepths implements QueueDepthSource {
    private final SqsClient sqs;
    private final QueueUrls urls;

    public QueueDepths(SqsClient sqs, QueueUrls urls) {
        this.sqs = sqs;
        this.urls = urls;
    }

    @Override
    public Map<String, Long> read() {
        return Map.of("jobs", depth(urls.jobs()), "dlq", depth(urls.deadLetter()));
    }

    private long depth(String url) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED))
                .attributes().values().stream().mapToLong(Long::parseLong).sum();
    }
}

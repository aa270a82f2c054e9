package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import org.jboss.logging.Logger;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.InvalidAttributeNameException;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

import java.time.Duration;
import java.util.Map;

/**
 * Creates the main queue, its dead-letter queue and the notices queue when missing, and (re)applies
 * their attributes, idempotently. The main queue's redrive policy is only a backstop: its
 * maxReceiveCount is far above the service's own limits, so SQS moves a message by itself only if
 * the service could never finish it (for example when a dead-letter send keeps failing).
 */
public final class QueueBootstrap {
    private static final Logger LOG = Logger.getLogger(QueueBootstrap.class);
    /** The dead-letter queue keeps payloads as long as SQS allows (MessageRetentionPeriod max, 14 days). */
    static final Duration DLQ_RETENTION = Duration.ofDays(14);

    private final SqsClient sqs;
    private final Names names;

    public QueueBootstrap(SqsClient sqs, Names names) {
        this.sqs = sqs;
        this.names = names;
    }

    public void ensureQueues(Duration retention, Duration visibility, int maxReceiveCount) {
        String dlqUrl = ensure(names.deadLetterQueue(), Map.of(
                QueueAttributeName.MESSAGE_RETENTION_PERIOD, Long.toString(DLQ_RETENTION.toSeconds())));
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlqUrl).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String mainUrl = ensure(names.jobsQueue(), Map.of(
                QueueAttributeName.MESSAGE_RETENTION_PERIOD, Long.toString(retention.toSeconds()),
                QueueAttributeName.VISIBILITY_TIMEOUT, Long.toString(visibility.toSeconds()),
                QueueAttributeName.REDRIVE_POLICY, "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"" + maxReceiveCount + "\"}"));
        String mainArn = sqs.getQueueAttributes(b -> b.queueUrl(mainUrl).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        try {
            // Only the main queue may use this DLQ.
            sqs.setQueueAttributes(b -> b.queueUrl(dlqUrl).attributes(Map.of(QueueAttributeName.REDRIVE_ALLOW_POLICY,
                    "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":[\"" + mainArn + "\"]}")));
        } catch (InvalidAttributeNameException e) {
            LOG.warnf("The SQS endpoint does not support RedriveAllowPolicy (an emulator gap); %s accepts any source queue",
                    names.deadLetterQueue());
        }
        Map<QueueAttributeName, String> notices = Map.of(QueueAttributeName.MESSAGE_RETENTION_PERIOD, Long.toString(DLQ_RETENTION.toSeconds()));
        if (names.fifoNotices()) {
            // FIFO is fixed at creation; deduplication ids come from the publisher, not from the body.
            ensure(names.noticesQueue(), notices, Map.of(QueueAttributeName.FIFO_QUEUE, "true",
                    QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "false"));
        } else {
            ensure(names.noticesQueue(), notices);
        }
        LOG.infof("Queues ready: %s (redrive backstop after %d receives), %s, %s",
                names.jobsQueue(), maxReceiveCount, names.deadLetterQueue(), names.noticesQueue());
    }

    private String ensure(String name, Map<QueueAttributeName, String> attributes) {
        return ensure(name, attributes, Map.of());
    }

    /** {@code atCreation}: attributes SQS takes only when the queue is created (FifoQueue). */
    private String ensure(String name, Map<QueueAttributeName, String> attributes, Map<QueueAttributeName, String> atCreation) {
        String url;
        try {
            url = sqs.getQueueUrl(b -> b.queueName(name)).queueUrl();
        } catch (QueueDoesNotExistException e) {
            Map<QueueAttributeName, String> all = new java.util.HashMap<>(attributes);
            all.putAll(atCreation);
            url = sqs.createQueue(b -> b.queueName(name).attributes(all)).queueUrl();
            LOG.infof("Created queue %s", name);
            return url;
        }
        String existing = url;
        sqs.setQueueAttributes(b -> b.queueUrl(existing).attributes(attributes));
        return url;
    }
}

package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterSink;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sends dead-letter copies: the original body and attributes plus the quarantine attributes. SQS
 * allows at most 10 message attributes, so the four quarantine attributes go first and originals
 * fill the rest; any original that does not fit is named in the log (never its value).
 */
@ApplicationScoped
public class SqsDeadLetterSink implements DeadLetterSink {
    private static final Logger LOG = Logger.getLogger(SqsDeadLetterSink.class);
    static final int MAX_REASON_CHARS = 256;

    private final SqsClient sqs;
    private final QueueUrls urls;

    public SqsDeadLetterSink(SqsClient sqs, QueueUrls urls) {
        this.sqs = sqs;
        this.urls = urls;
    }

    @Override
    public String send(InboundMessage original, String jobId, FailureClass failureClass, int attempts, String reason) {
        Map<String, MessageAttribute> attrs = deadLetterAttributes(original, jobId, failureClass, attempts, reason);
        List<String> dropped = original.attributes().keySet().stream().filter(k -> !attrs.containsKey(k)).sorted().toList();
        if (!dropped.isEmpty()) {
            LOG.warnf("Dead-letter copy of job %s leaves out attributes %s (SQS allows %d)", jobId, dropped, WireAttributes.SQS_MAX);
        }
        return sqs.sendMessage(b -> b.queueUrl(urls.deadLetter())
                .messageBody(original.body())
                .messageAttributes(SqsJobQueue.toSdk(attrs))).messageId();
    }

    static Map<String, MessageAttribute> deadLetterAttributes(InboundMessage original, String jobId, FailureClass failureClass,
                                                              int attempts, String reason) {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>();
        attrs.put(WireAttributes.JOB_ID, MessageAttribute.string(jobId));
        attrs.put(WireAttributes.FAILURE_CLASS, MessageAttribute.string(failureClass.name()));
        attrs.put(WireAttributes.ATTEMPTS, MessageAttribute.number(attempts));
        String r = reason == null || reason.isBlank() ? "unspecified" : reason;
        attrs.put(WireAttributes.QUARANTINE_REASON, MessageAttribute.string(r.length() > MAX_REASON_CHARS ? r.substring(0, MAX_REASON_CHARS) : r));
        // The wire contract's attributes first (a replay needs every one of them), then the producer's own.
        // The generation is kept when there is room: a copy moved back to the main queue is then seen as the
        // generation it is.
        // Not the count of returns from the dead-letter queue: it means nothing on a quarantined copy (a replay drops it too).
        Map<String, MessageAttribute> originals = new LinkedHashMap<>(original.attributes());
        originals.remove(WireAttributes.DEAD_LETTER_RETURNS);
        return WireAttributes.fitted(attrs, originals);
    }
}

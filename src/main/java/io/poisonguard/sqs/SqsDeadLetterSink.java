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
    static final int SQS_MAX_ATTRIBUTES = 10;
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
            LOG.warnf("Dead-letter copy of job %s leaves out attributes %s (SQS allows %d)", jobId, dropped, SQS_MAX_ATTRIBUTES);
        }
        return sqs.sendMessage(b -> b.queueUrl(urls.deadLetter())
                .messageBody(original.body())
                .messageAttributes(SqsJobQueue.toSdk(attrs))).messageId();
    }

    private static final List<String> CONTRACT = List.of(WireAttributes.TENANT, WireAttributes.JOB_TYPE, WireAttributes.SCHEMA_VERSION,
            WireAttributes.CHARSET, WireAttributes.CONTENT_TRANSFER_ENCODING, WireAttributes.ATTACHMENT_COUNT, WireAttributes.GENERATION);

    private static int contractRank(String name) {
        int i = CONTRACT.indexOf(name);
        return i < 0 ? CONTRACT.size() : i;
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
        // The generation is kept (last of the contract, it is what a full copy leaves out first): a copy
        // moved back to the main queue is then seen as the generation it is; a replay sets its own.
        original.attributes().entrySet().stream()
                .filter(e -> !attrs.containsKey(e.getKey()))
                .sorted(java.util.Comparator.<Map.Entry<String, MessageAttribute>>comparingInt(e -> contractRank(e.getKey()))
                        .thenComparing(Map.Entry::getKey))
                .limit(SQS_MAX_ATTRIBUTES - attrs.size())
                .forEach(e -> attrs.put(e.getKey(), e.getValue()));
        return attrs;
    }
}

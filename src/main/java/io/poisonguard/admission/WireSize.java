package io.poisonguard.admission;

import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A message's size as SQS counts it against its 1 MiB (1,048,576 bytes) message limit: the body's
 * UTF-8 bytes plus, for every message attribute, the UTF-8 bytes of its name, its data type and its
 * value (a Binary value counts its raw bytes). Admission leaves room for the worst case of what the
 * dead-letter copy adds, so every copy of an admitted message fits in the dead-letter queue.
 */
public final class WireSize {
    /** SQS's largest message, body and attributes together (SendMessage rejects anything larger). */
    public static final long SQS_MAX_MESSAGE_BYTES = 1_048_576;
    /** The longest {@code quarantine-reason} a dead-letter copy carries, in UTF-16 chars. */
    public static final int DEAD_LETTER_REASON_CHARS = 256;
    /** Room kept for a failure class name on the dead-letter copy (the longest constant is far shorter). */
    static final int FAILURE_CLASS_BYTES = 32;
    /** A UTF-16 char never takes more than 3 UTF-8 bytes (a surrogate pair: 4 bytes for 2 chars). */
    private static final int MAX_UTF8_PER_CHAR = 3;
    /** An int as SQS Number text: sign and ten digits. */
    private static final int INT_DIGITS = 11;

    /**
     * The most the dead-letter copy can add to a message: {@code job-id} (up to its length limit),
     * {@code failure-class}, {@code attempts}, {@code quarantine-reason} (up to its cap) and
     * {@code generation}, each counted whole even when it replaces an attribute of the same name.
     */
    public static final long DEAD_LETTER_ADDITIONS =
            attribute(WireAttributes.JOB_ID, "String", (long) JobIdentity.MAX_JOB_ID_LENGTH * MAX_UTF8_PER_CHAR)
                    + attribute(WireAttributes.FAILURE_CLASS, "String", FAILURE_CLASS_BYTES)
                    + attribute(WireAttributes.ATTEMPTS, "Number", INT_DIGITS)
                    + attribute(WireAttributes.QUARANTINE_REASON, "String", (long) DEAD_LETTER_REASON_CHARS * MAX_UTF8_PER_CHAR)
                    + attribute(WireAttributes.GENERATION, "Number", INT_DIGITS);

    /** The wire contract's attributes: what a dead-letter copy must keep for a replay. */
    public static final Set<String> CONTRACT = Set.of(WireAttributes.JOB_ID, WireAttributes.TENANT, WireAttributes.JOB_TYPE,
            WireAttributes.SCHEMA_VERSION, WireAttributes.CHARSET, WireAttributes.CONTENT_TRANSFER_ENCODING,
            WireAttributes.ATTACHMENT_COUNT);

    private WireSize() {
    }

    /** The message's size as SQS counts it. */
    public static long of(InboundMessage m) {
        return of(m.body(), m.attributes());
    }

    public static long of(String body, Map<String, MessageAttribute> attributes) {
        long n = Preflight.utf8Length(body);
        for (Map.Entry<String, MessageAttribute> e : attributes.entrySet()) {
            MessageAttribute a = e.getValue();
            long value = a.binaryValue() != null ? a.binaryValue().length : a.stringValue() == null ? 0 : Preflight.utf8Length(a.stringValue());
            n += attribute(e.getKey(), a.dataType(), value);
        }
        return n;
    }

    /** Whether a dead-letter copy of {@code m}, with every attribute kept, fits whatever quarantine adds. */
    public static boolean deadLetterCopyFits(InboundMessage m) {
        return ofCopied(m) + DEAD_LETTER_ADDITIONS <= SQS_MAX_MESSAGE_BYTES;
    }

    /**
     * What a dead-letter copy carries over of {@code m}, as SQS counts it: all of it but its {@code job-id} (the copy's
     * own, counted in {@link #DEAD_LETTER_ADDITIONS}, replaces it) and its {@code dead-letter-returns} (not copied). So
     * a copy the dead-letter intake gave back to the main queue, which gains both, is admitted as it was the first time.
     */
    public static long ofCopied(InboundMessage m) {
        Map<String, MessageAttribute> kept = m.attributes();
        if (kept.containsKey(WireAttributes.JOB_ID) || kept.containsKey(WireAttributes.DEAD_LETTER_RETURNS)) {
            kept = new java.util.HashMap<>(kept);
            kept.remove(WireAttributes.JOB_ID);
            kept.remove(WireAttributes.DEAD_LETTER_RETURNS);
        }
        return of(m.body(), kept);
    }

    /**
     * The message with only the wire contract's attributes: what the dead-letter copy of a message
     * too large to copy whole keeps (the body and what a replay needs; the producer's own attributes go).
     */
    public static InboundMessage contractOnly(InboundMessage m) {
        Map<String, MessageAttribute> kept = m.attributes().entrySet().stream().filter(e -> CONTRACT.contains(e.getKey()))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        return new InboundMessage(m.messageId(), m.receiptHandle(), m.body(), kept, m.sentAt(), m.receiveCount(), m.receivedAt());
    }

    private static long attribute(String name, String dataType, long valueBytes) {
        return Preflight.utf8Length(name) + Preflight.utf8Length(dataType == null ? "" : dataType) + valueBytes;
    }
}

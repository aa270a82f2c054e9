package io.poisonguard.admission;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Names of the message attributes of the wire contract (README, "Wire contract"). */
public final class WireAttributes {
    public static final String JOB_ID = "job-id";
    public static final String TENANT = "tenant";
    public static final String JOB_TYPE = "job-type";
    public static final String SCHEMA_VERSION = "schema-version";
    public static final String CHARSET = "charset";
    public static final String CONTENT_TRANSFER_ENCODING = "content-transfer-encoding";
    public static final String ATTACHMENT_COUNT = "attachment-count";
    /** Set on replayed copies: the ledger generation the copy belongs to. */
    public static final String GENERATION = "generation";
    /** Added to dead-letter copies. */
    public static final String FAILURE_CLASS = "failure-class";
    public static final String ATTEMPTS = "attempts";
    public static final String QUARANTINE_REASON = "quarantine-reason";
    /**
     * Set by the dead-letter intake on a copy SQS's redrive backstop moved that it sends back to the main queue: how many
     * times this job's copies were sent back so, which bounds the round trips of a job that never reaches its ledger.
     */
    public static final String DEAD_LETTER_RETURNS = "dead-letter-returns";

    /** SQS refuses a message with more than 10 message attributes (SendMessage, InvalidParameterValue). */
    public static final int SQS_MAX = 10;

    /**
     * The contract's attributes in the order a full message keeps them. The generation is last: it is what a full
     * dead-letter copy leaves out first, and a replay sets its own.
     */
    private static final List<String> CONTRACT = List.of(TENANT, JOB_TYPE, SCHEMA_VERSION, CHARSET, CONTENT_TRANSFER_ENCODING,
            ATTACHMENT_COUNT, GENERATION);

    private WireAttributes() {
    }

    private static int contractRank(String name) {
        int i = CONTRACT.indexOf(name);
        return i < 0 ? CONTRACT.size() : i;
    }

    /**
     * {@code first}, then as many of {@code originals} (those not named in {@code first}) as SQS's limit leaves room for:
     * the contract's first (a replay or a worker needs every one of them), then the producer's own by name.
     */
    public static Map<String, MessageAttribute> fitted(Map<String, MessageAttribute> first, Map<String, MessageAttribute> originals) {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>(first);
        originals.entrySet().stream()
                .filter(e -> !first.containsKey(e.getKey()))
                .sorted(Comparator.<Map.Entry<String, MessageAttribute>>comparingInt(e -> contractRank(e.getKey()))
                        .thenComparing(Map.Entry::getKey))
                .limit(Math.max(0, SQS_MAX - attrs.size()))
                .forEach(e -> attrs.put(e.getKey(), e.getValue()));
        return attrs;
    }
}

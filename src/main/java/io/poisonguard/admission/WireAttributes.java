package io.poisonguard.admission;

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

    private WireAttributes() {
    }
}

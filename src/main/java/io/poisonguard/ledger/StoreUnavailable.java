package io.poisonguard.ledger;

/**
 * A store (the ledger, the effect records, the vault, the quarantine records, the tenant directory, the audit trail,
 * the bulk replays) did not answer: an outage, throttling, a timeout. It is the system's fault, never the job's: nothing may be charged for it.
 * When {@link #outcomeUnknown()} a write may have landed even though no answer came back.
 */
public class StoreUnavailable extends RuntimeException {
    /** What the ledger's outages are named: only they close the ledger gate (consumption pauses on them alone). */
    public static final String LEDGER = "the ledger";

    private final boolean outcomeUnknown;
    private final String store;
    private final boolean refused;

    public StoreUnavailable(String what, boolean outcomeUnknown, Throwable cause) {
        this(what, outcomeUnknown, cause, what + " did not answer (" + cause.getClass().getSimpleName() + ")", false);
    }

    private StoreUnavailable(String what, boolean outcomeUnknown, Throwable cause, String message, boolean refused) {
        super(message, cause);
        this.outcomeUnknown = outcomeUnknown;
        this.store = what;
        this.refused = refused;
    }

    /** Whether the store refused the call as it refuses every call ({@link #refused(String, String, Throwable)}). */
    public boolean refused() {
        return refused;
    }

    /**
     * The store refused the call as it refuses every call (a permission the role lost, credentials expired or revoked, a
     * table that is not there, named by {@code code}): not an answer about the job, and nothing it asked for landed.
     */
    public static StoreUnavailable refused(String what, String code, Throwable cause) {
        return new StoreUnavailable(what, false, cause, what + " refused the call (" + code
                + "): a permission, credential or table fault, not the job's", true);
    }

    /** Whether the store that did not answer is the ledger (the attempt records every run needs first). */
    public boolean ledger() {
        return LEDGER.equals(store);
    }

    /** A write whose response was lost: it may or may not be durable. */
    public boolean outcomeUnknown() {
        return outcomeUnknown;
    }
}

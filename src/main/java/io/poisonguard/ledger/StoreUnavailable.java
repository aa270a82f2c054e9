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

    public StoreUnavailable(String what, boolean outcomeUnknown, Throwable cause) {
        super(what + " did not answer (" + cause.getClass().getSimpleName() + ")", cause);
        this.outcomeUnknown = outcomeUnknown;
        this.store = what;
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

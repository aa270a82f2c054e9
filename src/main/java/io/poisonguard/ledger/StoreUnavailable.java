package io.poisonguard.ledger;

/**
 * A store (the ledger, the effect records, the vault, the quarantine records, the tenant directory, the audit trail,
 * the bulk replays) did not answer: an outage, throttling, a timeout. It is the system's fault, never the job's: nothing may be charged for it.
 * When {@link #outcomeUnknown()} a write may have landed even though no answer came back.
 */
public class StoreUnavailable extends RuntimeException {
    private final boolean outcomeUnknown;

    public StoreUnavailable(String what, boolean outcomeUnknown, Throwable cause) {
        super(what + " did not answer (" + cause.getClass().getSimpleName() + ")", cause);
        this.outcomeUnknown = outcomeUnknown;
    }

    /** A write whose response was lost: it may or may not be durable. */
    public boolean outcomeUnknown() {
        return outcomeUnknown;
    }
}

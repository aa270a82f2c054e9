package io.poisonguard.ledger;

/** A conditional ledger write lost a race: the stored version was not the one read. */
public class LedgerConflict extends RuntimeException {
    public LedgerConflict(String jobId, long expectedVersion) {
        super("ledger record of job " + jobId + " changed concurrently (expected version " + expectedVersion + ")");
    }
}

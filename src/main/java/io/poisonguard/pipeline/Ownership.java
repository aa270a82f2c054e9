package io.poisonguard.pipeline;

import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;

/** Whether a stored ledger record still belongs to the attempt this worker is running. */
final class Ownership {
    private Ownership() {
    }

    /**
     * The same job, generation and attempt, still ACTIVE under this worker's lease: a newer version of
     * it can only be this worker's own write (a renewal whose answer was lost).
     */
    static boolean stillRunning(LedgerRecord stored, LedgerRecord ours, String worker) {
        return stored.state() == JobState.ACTIVE && stored.generation() == ours.generation() && stored.attempt() == ours.attempt()
                && worker.equals(stored.leaseOwner());
    }
}

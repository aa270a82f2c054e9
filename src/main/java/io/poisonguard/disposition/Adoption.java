package io.poisonguard.disposition;

import io.poisonguard.ledger.LedgerRecord;

/**
 * What the dead-letter intake does with a message it found in the DLQ without a quarantine
 * ({@code failure-class}) attribute: one SQS's redrive backstop or an operator moved there.
 */
public sealed interface Adoption {

    /** Quarantine the job as REDRIVEN: {@code next} must be durable (one conditional write) first. */
    record Quarantine(LedgerRecord next) implements Adoption {
    }

    /** The job is already quarantined (or unrecoverable): keep the copy as one more of its dead-letter copies. */
    record AlreadyParked(LedgerRecord current) implements Adoption {
    }

    /**
     * Nothing left to preserve: the job succeeded, an operator resolved it, or the copy is of a generation
     * a replay has left behind. The copy is deleted, as the main path deletes such copies (invariant 4).
     */
    record Finished(LedgerRecord current, String why) implements Adoption {
    }

    /**
     * SQS's redrive backstop moved a copy of a job the ledger still tracks (waiting for its next attempt, or an attempt
     * whose lease ran out): the receives that filled SQS's count were the service's own uncounted give-backs (held by the
     * systemic guard, returned while consumption was paused, a prefetched copy that found no slot), not the job's
     * failures. The copy goes back to the main queue as it came, where the ledger's limits judge the job.
     */
    record GiveBack(LedgerRecord current, String why) implements Adoption {
    }

    /** An attempt of the job holds a live lease: quarantining now would make it quarantined and active at once. Later. */
    record Busy(LedgerRecord current) implements Adoption {
    }
}

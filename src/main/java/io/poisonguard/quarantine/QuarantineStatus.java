package io.poisonguard.quarantine;

/** Where a quarantine record stands in the operator workflow. */
public enum QuarantineStatus {
    /** Waiting for an operator. */
    QUARANTINED,
    /** Replayed; the new generation has not finished yet. */
    REPLAYING,
    /** A replay completed the job. */
    REPLAYED,
    /** Discarded by an operator, with a reason. */
    RESOLVED,
    /** The payload is gone; nothing can be replayed. */
    UNRECOVERABLE
}

package io.poisonguard.ledger;

/** How one attempt ended, as recorded in the job's history. */
public enum AttemptOutcome {
    /** Started; no end recorded yet. */
    RUNNING,
    SUCCEEDED,
    /** The handler failed with a classified failure. */
    FAILED,
    /** Started and never finished: the lease ran out (the worker died or hung). */
    CRASHED,
    /** Refused by pre-flight admission; no handler ran. */
    REJECTED
}

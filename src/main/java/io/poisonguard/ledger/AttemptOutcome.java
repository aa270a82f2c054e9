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
    REJECTED,
    /** Ran past its deadline; the handler was interrupted. Counts as a TIMEOUT failure. */
    TIMED_OUT,
    /**
     * Given back unfinished because this worker is shutting down (a deploy, a scale-in). The worker's
     * fault, not the job's: counts toward no limit, and the message is made visible again at once.
     */
    ABANDONED,
    /**
     * Failed while consumption was stopped for the system's sake: the systemic-failure guard was tripped
     * (many distinct jobs failing the same way), or a DEPENDENCY_DOWN failure while the dependency's
     * circuit breaker stops the work. Not the job's fault: counts toward no limit.
     */
    HELD;

    /** Whether this outcome is charged to the job (counts toward a class limit). */
    public boolean charged() {
        return this != ABANDONED && this != HELD && this != RUNNING && this != SUCCEEDED;
    }
}

package io.poisonguard.ledger;

import java.util.EnumSet;
import java.util.Set;

/** Where a job stands in its ledger. The allowed moves are listed once, here. */
public enum JobState {
    /** An attempt holds the lease and is running (or its worker died and the lease will expire). */
    ACTIVE,
    /** The last attempt failed; the message is hidden until its ladder delay passes. */
    RETRY_WAIT,
    /** Done. Further copies of the job are deleted without running. */
    SUCCEEDED,
    /** Out of the main path: preserved in the dead-letter queue and the quarantine table; never run automatically. */
    QUARANTINED,
    /** An operator replayed it: a new generation is on its way to a worker. */
    REPLAYING,
    /** An operator discarded it with a reason; it must not run again. */
    RESOLVED,
    /**
     * Its payload is gone (retention passed, DLQ purged): nothing left to replay. Quarantined again only if a copy of it
     * turns up after all (a resend, a copy moved to the dead-letter queue) and is kept.
     */
    UNRECOVERABLE,
    /**
     * Poison of a disposable job type: dropped on purpose instead of quarantined (no dead-letter copy, no record,
     * no payload kept). Further copies are deleted without running.
     */
    DROPPED;

    public Set<JobState> next() {
        return switch (this) {
            case ACTIVE -> EnumSet.of(ACTIVE, RETRY_WAIT, SUCCEEDED, QUARANTINED);
            case RETRY_WAIT -> EnumSet.of(ACTIVE, RETRY_WAIT, QUARANTINED);
            case QUARANTINED -> EnumSet.of(REPLAYING, RESOLVED, UNRECOVERABLE, DROPPED);
            // REPLAYING -> REPLAYING: an operator re-issues a replay that never reached a worker.
            case REPLAYING -> EnumSet.of(ACTIVE, QUARANTINED, UNRECOVERABLE, REPLAYING);
            // UNRECOVERABLE -> QUARANTINED: a copy of the payload concluded gone turned up and is kept; the job can be replayed.
            case UNRECOVERABLE -> EnumSet.of(QUARANTINED);
            case SUCCEEDED, RESOLVED, DROPPED -> EnumSet.noneOf(JobState.class);
        };
    }

    /** Out of the main path for good or until an operator acts: no copy of the job may run. */
    public boolean parked() {
        return this == QUARANTINED || this == RESOLVED || this == UNRECOVERABLE || this == DROPPED;
    }

    public boolean canMoveTo(JobState target) {
        return next().contains(target);
    }
}

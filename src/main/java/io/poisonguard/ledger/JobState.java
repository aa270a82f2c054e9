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
    QUARANTINED;

    public Set<JobState> next() {
        return switch (this) {
            case ACTIVE -> EnumSet.of(ACTIVE, RETRY_WAIT, SUCCEEDED, QUARANTINED);
            case RETRY_WAIT -> EnumSet.of(ACTIVE, RETRY_WAIT, QUARANTINED);
            case SUCCEEDED, QUARANTINED -> EnumSet.noneOf(JobState.class);
        };
    }

    public boolean canMoveTo(JobState target) {
        return next().contains(target);
    }
}

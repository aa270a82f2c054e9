package io.poisonguard.alerts;

import java.time.Instant;

/**
 * What an alert says, naming the item (seed 000: an on-call reading a restart graph investigates
 * memory for an hour; an alert that names the job and its attempts points at the cause).
 */
public record Alert(
        String event,
        String jobId,
        String tenant,
        String jobType,
        String failureClass,
        int attempts,
        int generation,
        String reason,
        String link,
        Instant at) {

    /** A job was quarantined. */
    public static final String QUARANTINED = "job.quarantined";
    /** A replayed job finished: {@code failureClass} is null when it succeeded. */
    public static final String REPLAY_OUTCOME = "job.replay-outcome";
}

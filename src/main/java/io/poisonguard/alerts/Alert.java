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
        Instant at,
        String owner) {

    /** An alert on no job or before owners were known. */
    public Alert(String event, String jobId, String tenant, String jobType, String failureClass, int attempts, int generation, String reason,
                 String link, Instant at) {
        this(event, jobId, tenant, jobType, failureClass, attempts, generation, reason, link, at, null);
    }

    /** A job was quarantined. */
    public static final String QUARANTINED = "job.quarantined";
    /** A replayed job finished: {@code failureClass} is null when it succeeded. */
    public static final String REPLAY_OUTCOME = "job.replay-outcome";
    /**
     * Many distinct jobs failed the same way: the system, not the items, is suspected. {@code jobId} is
     * null; {@code failureClass} is the signature's class; {@code reason} names the signature and a
     * sample of job ids.
     */
    public static final String SYSTEMIC_TRIPPED = "system.failure-suspected";
    /**
     * A quarantined job passed a review deadline of its owner's ({@code reason} says which: acknowledge or resolve) and
     * nobody acted: sent once per stage to the owner's escalation route.
     */
    public static final String ESCALATED = "job.escalated";
    /** The systemic-failure guard cleared (a probe succeeded, or an operator resumed). */
    public static final String SYSTEMIC_RESUMED = "system.resumed";
}

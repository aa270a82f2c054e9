package io.poisonguard.ladder;

/** What ends a retry chain, whichever comes first. */
public enum StopCondition {
    /** Attempt {@code max-attempts} ran and failed: the service quarantines the job. */
    ATTEMPT_LIMIT,
    /** The next retry would start past the class's cutoff from the first receive: the service quarantines the job. */
    CUTOFF,
    /**
     * The next retry would start past the queue's MessageRetentionPeriod: SQS deletes the message
     * while it waits, and nothing quarantines it.
     */
    RETENTION;

    /** Lower-case words for reports and logs. */
    public String words() {
        return name().toLowerCase().replace('_', ' ');
    }
}

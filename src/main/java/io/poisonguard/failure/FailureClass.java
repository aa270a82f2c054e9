package io.poisonguard.failure;

/**
 * Why an attempt failed. Each class carries its own attempt limit and delay ladder, so a quota
 * error is never counted like a corrupt payload.
 */
public enum FailureClass {
    /** The input cannot change: invalid or unsupported content. Retrying cannot help. */
    PERMANENT,
    /** A blip that may clear on its own: timeouts, 5xx answers, broken connections. */
    TRANSIENT,
    /** The downstream asked us to slow down (HTTP 429 or a quota error). */
    THROTTLED,
    /** The downstream is unavailable as a whole; the item is not at fault. */
    DEPENDENCY_DOWN,
    /**
     * Inferred: an attempt that ran alone in its worker started and never finished, so this job killed
     * or hung the worker. Attributable.
     */
    CRASH,
    /**
     * Inferred: an attempt started and never finished while other jobs were in flight in the same
     * worker, so any of them may have caused it. Not attributable: the job is run alone next time, and
     * this class has its own, higher limit so nothing cycles forever.
     */
    CRASH_AMBIGUOUS,
    /** Rejected by pre-flight admission before any handler saw it. */
    ADMISSION,
    /**
     * The attempt ran past its deadline (per job type): its handler thread was interrupted and the
     * heartbeat stopped renewing it. A hung handler would otherwise hold its slot and its lease for
     * up to SQS's 12-hour visibility cap.
     */
    TIMEOUT,
    /**
     * Moved to the DLQ by SQS's redrive backstop (maxReceiveCount) or by hand, not by the service: the
     * dead-letter intake finds it there without a quarantine record and adopts it. Never the class of
     * an attempt's failure; its limit of 1 only means "quarantined as found".
     */
    REDRIVEN;

    /** The kebab-case spelling used in configuration keys, metrics tags and message attributes. */
    public String key() {
        return name().toLowerCase().replace('_', '-');
    }
}

package io.poisonguard.disposition;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.LedgerRecord;

import java.time.Duration;

/** The next state of a job after an attempt ends; the orchestrator makes {@code next} durable first. */
public sealed interface Disposition {
    LedgerRecord next();

    /** Succeeded: record it, then delete the message. */
    record Complete(LedgerRecord next) implements Disposition {
    }

    /** Failed, and its class still has attempts left: hide the message for {@code delay}. */
    record RetryAfter(LedgerRecord next, Duration delay) implements Disposition {
    }

    /** Out of the main path: quarantine record and DLQ copy, then delete the message. */
    record Quarantine(LedgerRecord next, FailureClass failureClass, String reason) implements Disposition {
    }
}

package io.poisonguard.ledger;

import io.poisonguard.failure.FailureClass;

import java.time.Duration;
import java.time.Instant;

/**
 * One line of a job's bounded attempt history. {@code message} is already scrubbed and truncated;
 * {@code retryDelay} is the ladder delay chosen after this attempt, if any.
 */
public record AttemptEntry(
        int number,
        int generation,
        AttemptOutcome outcome,
        FailureClass failureClass,
        String errorType,
        String message,
        Instant startedAt,
        Instant endedAt,
        String worker,
        Duration retryDelay) {

    public static AttemptEntry started(int number, int generation, Instant now, String worker) {
        return new AttemptEntry(number, generation, AttemptOutcome.RUNNING, null, null, null, now, null, worker, null);
    }

    public AttemptEntry ended(AttemptOutcome outcome, FailureClass failureClass, String errorType, String message, Instant at) {
        return new AttemptEntry(number, generation, outcome, failureClass, errorType, message, startedAt, at, worker, retryDelay);
    }

    public AttemptEntry withRetryDelay(Duration delay) {
        return new AttemptEntry(number, generation, outcome, failureClass, errorType, message, startedAt, endedAt, worker, delay);
    }
}

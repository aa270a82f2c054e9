package io.poisonguard.ledger;

import io.poisonguard.failure.FailureClass;

import java.time.Duration;
import java.time.Instant;

/**
 * One line of a job's bounded attempt history. {@code message} is already scrubbed and truncated;
 * {@code retryDelay} is the ladder delay chosen after this attempt, if any; {@code isolated} and
 * {@code othersInFlight} say whether the job ran alone, which decides whether a crash is its own.
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
        Duration retryDelay,
        boolean isolated,
        int othersInFlight) {

    public static AttemptEntry started(int number, int generation, Instant now, String worker) {
        return started(number, generation, now, worker, false, 0);
    }

    /**
     * @param isolated       the attempt runs alone in its worker (the isolation lane), so a crash is its own
     * @param othersInFlight other jobs in flight in the worker when it started
     */
    public static AttemptEntry started(int number, int generation, Instant now, String worker, boolean isolated, int othersInFlight) {
        return new AttemptEntry(number, generation, AttemptOutcome.RUNNING, null, null, null, now, null, worker, null, isolated, othersInFlight);
    }

    public AttemptEntry ended(AttemptOutcome outcome, FailureClass failureClass, String errorType, String message, Instant at) {
        return new AttemptEntry(number, generation, outcome, failureClass, errorType, message, startedAt, at, worker, retryDelay,
                isolated, othersInFlight);
    }

    public AttemptEntry withRetryDelay(Duration delay) {
        return new AttemptEntry(number, generation, outcome, failureClass, errorType, message, startedAt, endedAt, worker, delay,
                isolated, othersInFlight);
    }
}

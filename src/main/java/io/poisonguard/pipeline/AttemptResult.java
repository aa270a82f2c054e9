package io.poisonguard.pipeline;

import io.poisonguard.failure.Failure;
import io.poisonguard.systemic.Signature;

import java.time.Duration;

/** How one run of a handler ended, as the attempt stage saw it. Every attempt ends in exactly one. */
sealed interface AttemptResult {

    /** The handler returned. */
    record Succeeded() implements AttemptResult {
    }

    /** The handler threw; {@code signature} is how the failure looks to the systemic guard. */
    record Failed(Failure failure, Signature signature) implements AttemptResult {
    }

    /**
     * The handler ran past its deadline and was interrupted; {@code stillRunning} when it had not stopped within
     * {@code attempt.stop-grace} after that (it ignores interrupts: the worker is stuck and asks to be replaced).
     */
    record TimedOut(Duration deadline, boolean stillRunning) implements AttemptResult {
        TimedOut(Duration deadline) {
            this(deadline, false);
        }
    }

    /** The handler threw an error the JVM may not survive (OutOfMemoryError, InternalError, ...). */
    record Crashed(String errorType) implements AttemptResult {
    }

    /** A store the handler needs (the effect records) did not answer: the system's fault, not the job's. */
    record StoreDown(io.poisonguard.ledger.StoreUnavailable cause) implements AttemptResult {
    }

    /**
     * The worker is shutting down and gave the attempt back unfinished; {@code stillRunning} when its handler had not
     * stopped within a moment of its interrupt (it ignores interrupts, and runs until the process ends).
     */
    record Abandoned(boolean stillRunning) implements AttemptResult {
        Abandoned() {
            this(false);
        }
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import jakarta.inject.Singleton;

import java.util.Optional;

/**
 * Sequences the three stages of one received message: intake (pre-flight, ledger, lane, the attempt
 * made durable), the attempt (the handler, bounded by its deadline), and the outcome (the next state
 * made durable, then the message acted on). Each stage is its own class; this one only orders them.
 */
@Singleton
public class JobProcessor {
    private final IntakeStage intake;
    private final AttemptStage attempts;
    private final OutcomeStage outcomes;

    public JobProcessor(IntakeStage intake, AttemptStage attempts, OutcomeStage outcomes) {
        this.intake = intake;
        this.attempts = attempts;
        this.outcomes = outcomes;
    }

    public void process(InboundMessage m) {
        process(m, () -> { });
    }

    /**
     * Processes {@code m}; {@code handlerReturned} runs (on this thread) once its handler has returned or thrown,
     * before the outcome is written, so the caller may hand the handler's slot on. It does not run for a handler
     * that was cut off (deadline, shutdown) and may still be running, nor for a copy that never ran.
     */
    public void process(InboundMessage m, Runnable handlerReturned) {
        Optional<IntakeStage.Ticket> ticket = intake.admit(m);
        if (ticket.isEmpty()) {
            return;
        }
        try (IntakeStage.Ticket t = ticket.get()) {
            AttemptStage.Attempted attempted = attempts.run(t.started(), m, t.admitted());
            if (attempted.handlerReturned()) {
                handlerReturned.run();
            }
            outcomes.settle(attempted);
            attempts.awaitStop(attempted);
        }
    }

    /** Shutdown: gives back every attempt still running (ABANDONED, uncounted); returns how many. */
    int abandonRunning() {
        return attempts.abandonAll();
    }
}

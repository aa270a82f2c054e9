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

    /**
     * Processes {@code m}. {@code releaseSlot} gives the message's working slot to the next job; the caller
     * calls it after this returns too, so it must act once. It is called early only for an attempt whose
     * handler is stuck (ignores its interrupt): the attempt was ended without it, and its thread may never return.
     */
    public void process(InboundMessage m, Runnable releaseSlot) {
        Optional<IntakeStage.Ticket> ticket = intake.admit(m);
        if (ticket.isEmpty()) {
            return;
        }
        try (IntakeStage.Ticket t = ticket.get()) {
            AttemptStage.Attempted attempted = attempts.run(t.started(), m, t.admitted(),
                    new AttemptStage.Ending(outcomes::settle, () -> {
                        t.close();
                        releaseSlot.run();
                    }));
            if (!attempted.settled()) {
                outcomes.settle(attempted);
            }
        }
    }

    /** Shutdown: gives back every attempt still running (ABANDONED, uncounted); returns how many. */
    int abandonRunning() {
        return attempts.abandonAll();
    }
}

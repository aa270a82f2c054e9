package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import jakarta.inject.Singleton;

import java.util.Optional;

/**
 * Sequences the three stages of one received message: intake (pre-flight, ledger, lane, the attempt
 * made durable), the attempt (the handler, bounded by its deadline), and the outcome (the next state
 * made durable, then the message acted on). Each stage is its own class; this one only orders them, and
 * tells the caller's {@link Turn} when the handler may start and when it has returned.
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
     * The caller's share of the worker, told of the job's progress on the job's own thread. The intake runs
     * before {@link #start()}: a job's attempt is made durable while it waits for a handler's slot.
     */
    public interface Turn {
        /** A turn that starts at once and holds nothing. */
        Turn NOW = new Turn() {
            @Override
            public boolean claim() {
                return true;
            }

            @Override
            public void unclaim() {
            }

            @Override
            public Optional<String> start() {
                return Optional.empty();
            }

            @Override
            public void handlerReturned() {
            }
        };

        /**
         * Takes the handler's slot now, before the attempt is recorded, for a copy that is to be recorded as running
         * alone in a worker with room for one job: no other copy may start ahead of it or beside it until its outcome
         * is recorded (it then keeps the slot through its outcome). Never waits; false when the slot is not free, and
         * the copy is then not recorded as running alone.
         */
        boolean claim();

        /** Gives back a slot {@link #claim()} took, for a copy that is not to run after all (nothing when none was). */
        void unclaim();

        /**
         * The attempt is recorded; waits for the handler's slot (held already after a {@link #claim()}). Empty: the handler may run now. Otherwise why
         * it may not (no slot in time, consumption paused, the worker stopping): the attempt is then given
         * back uncounted without its handler having run.
         */
        Optional<String> start();

        /** The handler returned or threw, before the outcome is written: its slot may go to the next job. */
        void handlerReturned();
    }

    public void process(InboundMessage m) {
        process(m, Turn.NOW);
    }

    /**
     * Processes {@code m}. {@code turn.handlerReturned()} runs once its handler has returned or thrown, before
     * the outcome is written; not for a handler that was cut off (deadline, shutdown) and may still be running,
     * nor for a copy that never ran.
     */
    public void process(InboundMessage m, Turn turn) {
        Optional<IntakeStage.Ticket> ticket = intake.admit(m, turn);
        if (ticket.isEmpty()) {
            return;
        }
        try (IntakeStage.Ticket t = ticket.get()) {
            Optional<String> notNow = turn.start();
            if (notNow.isPresent()) {
                outcomes.giveBack(t.started(), m, notNow.get());
                return;
            }
            AttemptStage.Attempted attempted = attempts.run(t.started(), m, t.admitted());
            if (attempted.handlerReturned()) {
                turn.handlerReturned();
            }
            // The effects the handler deferred to its success go out now, outside its slot.
            attempted = attempts.afterHandler(attempted);
            // A handler cut off (at its deadline, or at shutdown) is given time to stop before the outcome frees the job.
            attempted = attempts.awaitCutOffStop(attempted);
            // The SDK starts no call from an interrupted thread: an interrupt (what gave the attempt back) waits until
            // the outcome is written.
            boolean interrupted = Thread.interrupted();
            try {
                outcomes.settle(attempted);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** Shutdown: gives back every attempt still running (ABANDONED, uncounted); returns how many. */
    int abandonRunning() {
        return attempts.abandonAll();
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.Verdict;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.effects.RecordedEffects;
import io.poisonguard.failure.Classifier;
import io.poisonguard.failure.Failure;
import io.poisonguard.handler.Job;
import io.poisonguard.handler.JobHandler;
import io.poisonguard.handler.JobHandlers;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import io.poisonguard.systemic.Signature;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import jakarta.inject.Named;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Runs one attempt's handler, which is already recorded in the ledger, and always ends it. The handler runs
 * on the job's own thread (no hand-off to another thread and back for every message). It is cut off at its
 * deadline (TIMEOUT) or at shutdown (ABANDONED): one watcher thread notices within {@link #WATCH_TICK},
 * interrupts it, and starts a rescuer that ends the attempt at once, as if the handler had stopped. A handler
 * that honours the interrupt stops within moments and its thread carries on once the outcome is durable; one
 * that is still running {@code attempt.stop-grace} later is stuck for good: the rescuer gives its place in the
 * lane and its working slot to other jobs, and the worker reports itself not live. Anything the handler
 * throws, errors included, ends the attempt too.
 */
@Singleton
public class AttemptStage {
    private static final Logger LOG = Logger.getLogger(AttemptStage.class);

    private final JobHandlers handlers;
    private final Classifier classifier;
    private final Clock clock;
    private final Metrics metrics;
    private final Heartbeat heartbeat;
    private final WorkerHealth health;
    private final String worker;
    private final PoisonGuardConfig config;
    private final Set<Run> runs = ConcurrentHashMap.newKeySet();

    public AttemptStage(JobHandlers handlers, Classifier classifier, Clock clock, Metrics metrics, Heartbeat heartbeat,
                        WorkerHealth health, @Named("worker-id") String worker, PoisonGuardConfig config) {
        this.handlers = handlers;
        this.classifier = classifier;
        this.clock = clock;
        this.metrics = metrics;
        this.heartbeat = heartbeat;
        this.health = health;
        this.worker = worker;
        this.config = config;
    }

    /**
     * An attempt that ended: its heartbeat registration, the message, and how it ended. {@code settled}: a
     * rescuer already made the outcome durable (the handler was cut off), so the caller must not settle it again.
     */
    record Attempted(Running running, InboundMessage message, Verdict.Admitted admitted, AttemptResult result,
                     Map<String, Integer> effects, boolean settled) {
    }

    /**
     * What the caller does with an attempt that a rescuer ends: {@code settle} makes its outcome durable;
     * {@code release} gives its place in the lane and its working slot to other jobs (once the handler is
     * known to be stuck).
     */
    record Ending(Consumer<Attempted> settle, Runnable release) {
    }

    /** One handler in flight on its job's thread. Its fields change under the run's own monitor. */
    private static final class Run {
        final Thread thread;
        final long deadlineNanos;
        final Duration deadline;
        final String jobId;
        final int attempt;
        final long t0;
        final Rescue rescue;
        /** The handler returned (set by the job's thread). */
        boolean left;
        /** How the attempt was cut off (set by the watcher or shutdown), if it was. */
        AttemptResult cut;
        /** Who ends the attempt: the job's thread or the rescuer, whichever claims it first. */
        final AtomicBoolean claimed = new AtomicBoolean();
        /** Completed once the rescuer's outcome is durable (or it gave up). */
        final CompletableFuture<Void> rescued = new CompletableFuture<>();

        Run(Thread thread, long t0, Duration deadline, String jobId, int attempt, Rescue rescue) {
            this.thread = thread;
            this.rescue = rescue;
            this.t0 = t0;
            this.deadlineNanos = t0 + deadline.toNanos();
            this.deadline = deadline;
            this.jobId = jobId;
            this.attempt = attempt;
        }

        /** Cuts the handler off with {@code how} unless it already returned or was cut; true if this call cut it. */
        synchronized boolean cut(AttemptResult how) {
            if (left || cut != null) {
                return false;
            }
            cut = how;
            thread.interrupt();
            return true;
        }

        /** The job's thread is back from the handler; how the attempt ended (the cut wins over what it returned). */
        synchronized AttemptResult leave(AttemptResult returned) {
            left = true;
            return cut != null ? cut : returned;
        }

        synchronized boolean left() {
            return left;
        }
    }

    /**
     * Ends attempts that ran past their deadline: one watcher for all of them, so an attempt's wait is a plain
     * wait (no timer per message). Checks every {@link #WATCH_TICK}, which is how late a deadline may be noticed.
     */
    static final Duration WATCH_TICK = Duration.ofMillis(50);
    private volatile Thread watcher;
    /** What a rescuer needs to end an attempt without its job's thread. */
    private record Rescue(Running running, InboundMessage message, Verdict.Admitted admitted, RecordedEffects context, Ending ending) {
    }

    @PostConstruct
    void startWatcher() {
        watcher = Thread.ofPlatform().daemon().name("poison-guard-deadlines").start(this::watchDeadlines);
    }

    @PreDestroy
    void stopWatcher() {
        Thread w = watcher;
        if (w != null) {
            w.interrupt();
        }
    }

    private void watchDeadlines() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(WATCH_TICK);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            for (Run r : runs) {
                if (now - r.deadlineNanos >= 0 && cutOff(r, new AttemptResult.TimedOut(r.deadline))) {
                    LOG.warnf("Job %s attempt %d ran past its deadline of %s; interrupted", r.jobId, r.attempt, r.deadline);
                }
            }
        }
    }

    /** Cuts {@code r}'s handler off and starts its rescuer; false if it had already returned or been cut. */
    private boolean cutOff(Run r, AttemptResult how) {
        if (!r.cut(how)) {
            return false;
        }
        Thread.ofVirtual().name("poison-guard-rescue").start(() -> rescue(r, how, r.rescue));
        return true;
    }

    /**
     * Ends a cut-off attempt without waiting for its handler: the outcome made durable at once (the handler's
     * effects stop here: it can start no more), then up to the stop grace for the handler to stop. If it does
     * not, it is stuck: the worker is reported not live, and the job's lane place and working slot are released.
     */
    private void rescue(Run r, AttemptResult how, Rescue rescue) {
        if (!r.claimed.compareAndSet(false, true)) {
            return;
        }
        try {
            metrics.handled(rescue.admitted().jobType(), resultTag(how), Duration.ofNanos(System.nanoTime() - r.t0));
            rescue.ending().settle().accept(new Attempted(rescue.running(), rescue.message(), rescue.admitted(), how,
                    rescue.context().end(), true));
        } catch (RuntimeException e) {
            LOG.errorf("Job %s attempt %d: ending the cut-off attempt failed (%s); the copy is left to redeliver", r.jobId, r.attempt,
                    e.getClass().getSimpleName());
        } finally {
            r.rescued.complete(null);
        }
        long graceEnd = System.nanoTime() + config.attempt().stopGrace().toNanos();
        try {
            while (!r.left() && System.nanoTime() - graceEnd < 0) {
                Thread.sleep(Math.min(WATCH_TICK.toMillis(), Math.max(1, (graceEnd - System.nanoTime()) / 1_000_000)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!r.left()) {
            health.stuck(r.jobId, r.attempt);
            rescue.ending().release().run();
        }
    }

    /** The deadline of an attempt of {@code jobType}. */
    Duration deadline(String jobType) {
        return config.attempt().deadlines().getOrDefault(jobType, config.attempt().deadline());
    }

    Attempted run(LedgerRecord started, InboundMessage m, Verdict.Admitted admitted, Ending ending) {
        JobHandler handler = handlers.forType(admitted.jobType()).orElseThrow();
        Job job = new Job(started.jobId(), admitted.tenant(), admitted.jobType(), admitted.schemaVersion(), admitted.text(),
                started.attempt(), started.generation());
        RecordedEffects context = new RecordedEffects(started.effects().keySet(), started.attempt());
        Duration deadline = deadline(admitted.jobType());
        Running running = heartbeat.register(m, started, clock.instant().plus(deadline));
        Run run = new Run(Thread.currentThread(), System.nanoTime(), deadline, started.jobId(), started.attempt(),
                new Rescue(running, m, admitted, context, ending));
        runs.add(run);
        AttemptResult result;
        try {
            result = run.leave(invoke(handler, job, context));
        } finally {
            runs.remove(run);
            // What interrupted the handler (its deadline, shutdown, or the handler itself) must not reach the
            // outcome's writes on this thread.
            Thread.interrupted();
        }
        if (!run.claimed.compareAndSet(false, true)) {
            // Cut off, and a rescuer is ending the attempt: carry on (release the slot) only once it is durable.
            run.rescued.join();
            return new Attempted(running, m, admitted, result, Map.of(), true);
        }
        metrics.handled(admitted.jobType(), resultTag(result), Duration.ofNanos(System.nanoTime() - run.t0));
        return new Attempted(running, m, admitted, result, context.end(), false);
    }

    private AttemptResult invoke(JobHandler handler, Job job, RecordedEffects context) {
        try {
            handler.handle(job, context);
            return new AttemptResult.Succeeded();
        } catch (VirtualMachineError e) {
            // The JVM may be damaged (out of memory, an internal error): this attempt counts as a crash
            // of the job, and the worker asks to be replaced. A stack overflow is the handler's own
            // recursion and leaves the JVM intact, so it is classified like any failure.
            if (e instanceof StackOverflowError) {
                return failed(e);
            }
            health.fatal(job.jobId(), e.getClass().getSimpleName());
            return new AttemptResult.Crashed(e.getClass().getSimpleName());
        } catch (Throwable t) {
            if (t instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return failed(t);
        }
    }

    private AttemptResult failed(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof StoreUnavailable down) {
                return new AttemptResult.StoreDown(down);
            }
        }
        Failure f = classifier.classify(t);
        return new AttemptResult.Failed(f, new Signature(f.failureClass(), f.errorType(), Classifier.origin(t)));
    }

    /** Shutdown: cuts off every attempt still running, to be given back (ABANDONED, uncounted); returns how many. */
    int abandonAll() {
        int n = 0;
        for (Run r : runs) {
            if (cutOff(r, new AttemptResult.Abandoned())) {
                n++;
            }
        }
        return n;
    }

    private static String resultTag(AttemptResult r) {
        return switch (r) {
            case AttemptResult.Succeeded s -> "succeeded";
            case AttemptResult.Failed f -> f.failure().failureClass().name();
            case AttemptResult.TimedOut t -> "TIMEOUT";
            case AttemptResult.Crashed c -> "CRASH";
            case AttemptResult.Abandoned a -> "abandoned";
            case AttemptResult.StoreDown d -> "store-unavailable";
        };
    }
}

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
import java.util.concurrent.ExecutionException;

/**
 * Runs one attempt's handler, which is already recorded in the ledger, and always returns how it
 * ended. The handler runs on a thread of its own so the attempt can end without it (a platform thread, reused:
 * {@link HandlerThreads}): at its deadline
 * (interrupted, TIMEOUT, noticed by one watcher thread within {@link #WATCH_TICK}), at shutdown (ABANDONED),
 * or when it throws anything at all, errors included.
 */
@Singleton
public class AttemptStage {
    private static final Logger LOG = Logger.getLogger(AttemptStage.class);
    /**
     * The least time a handler cut off at its deadline is given to stop before it is called stuck, and all the time one
     * cut off at shutdown is given (the shutdown grace is spent by then).
     */
    static final Duration MIN_UNWIND = Duration.ofMillis(200);

    private final JobHandlers handlers;
    private final Classifier classifier;
    private final Clock clock;
    private final Metrics metrics;
    private final Heartbeat heartbeat;
    private final WorkerHealth health;
    private final String worker;
    private final PoisonGuardConfig config;
    private final Set<Run> runs = ConcurrentHashMap.newKeySet();
    private final HandlerThreads handlerThreads = new HandlerThreads();

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

    /** An attempt that ended: its heartbeat registration, the message, how it ended, and its effects. */
    record Attempted(Running running, InboundMessage message, Verdict.Admitted admitted, AttemptResult result, HandlerThread handlerThread,
                     RecordedEffects effects, long deadlineNanos, Duration deadline) {
        /** Whether the handler returned (or threw) on its own; false when it was cut off and may still be running. */
        boolean handlerReturned() {
            return !(result instanceof AttemptResult.TimedOut || result instanceof AttemptResult.Abandoned);
        }

        /** Effects this attempt performed, name to attempt number: what the write that ends it records. */
        Map<String, Integer> performed() {
            return effects == null ? Map.of() : effects.performed();
        }

        Attempted withResult(AttemptResult r) {
            return new Attempted(running, message, admitted, r, handlerThread, effects, deadlineNanos, deadline);
        }
    }

    /**
     * One handler in flight: the future its end is reported on (first report wins), and when it must have ended. A run of
     * deferred effects on the job's own thread has {@code cutOff}, counted down once the thread was interrupted.
     */
    private record Run(CompletableFuture<AttemptResult> end, HandlerThread thread, long deadlineNanos, Duration deadline, String jobId, int attempt,
                       java.util.concurrent.CountDownLatch cutOff) {
        Run(CompletableFuture<AttemptResult> end, HandlerThread thread, long deadlineNanos, Duration deadline, String jobId, int attempt) {
            this(end, thread, deadlineNanos, deadline, jobId, attempt, null);
        }

        /** Ends the run with {@code result} and interrupts its thread, unless it had ended; whether it did. */
        boolean cut(AttemptResult result) {
            if (!end.complete(result)) {
                return false;
            }
            try {
                thread.interrupt();
            } finally {
                if (cutOff != null) {
                    cutOff.countDown();
                }
            }
            return true;
        }

        // Each run is itself, whatever its fields hold: the set of runs needs no field-by-field hash (every
        // attempt adds and removes one, and a record's own hash would visit all six fields each time).
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    /**
     * Ends attempts that ran past their deadline: one watcher for all of them, so an attempt's wait is a plain
     * wait (no timer per message). Checks every {@link #WATCH_TICK}, which is how late a deadline may be noticed.
     */
    static final Duration WATCH_TICK = Duration.ofMillis(50);
    private volatile Thread watcher;

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
                // Whatever one run's ending meets, the watcher goes on: were it to end, no handler would be cut off at its
                // deadline again, and hung ones would hold their slots (and lane) for good.
                try {
                    if (now - r.deadlineNanos() >= 0 && r.cut(new AttemptResult.TimedOut(r.deadline()))) {
                        LOG.warnf("Job %s attempt %d ran past its deadline of %s; interrupted", r.jobId(), r.attempt(), r.deadline());
                    }
                } catch (Throwable t) {
                    LOG.errorf("Ending job %s attempt %d at its deadline met %s; the deadline watcher goes on", r.jobId(), r.attempt(),
                            t.getClass().getSimpleName());
                }
            }
        }
    }

    /** The deadline of an attempt of {@code jobType}. */
    Duration deadline(String jobType) {
        return config.attempt().deadlines().getOrDefault(jobType, config.attempt().deadline());
    }

    Attempted run(LedgerRecord started, InboundMessage m, Verdict.Admitted admitted) {
        JobHandler handler = handlers.forType(admitted.jobType()).orElseThrow();
        Job job = new Job(started.jobId(), admitted.tenant(), admitted.jobType(), admitted.schemaVersion(), admitted.text(),
                started.attempt(), started.generation());
        RecordedEffects context = new RecordedEffects(started.effects().keySet(), started.attempt());
        Duration deadline = deadline(admitted.jobType());
        Running running = heartbeat.register(m, started, clock.instant().plus(deadline));
        CompletableFuture<AttemptResult> end = new CompletableFuture<>();
        long t0 = System.nanoTime();
        HandlerThreads.Handle thread = handlerThreads.unstarted(() -> end.complete(invoke(handler, job, context)));
        Run run = new Run(end, thread, t0 + deadline.toNanos(), deadline, started.jobId(), started.attempt());
        runs.add(run);
        AttemptResult result;
        try {
            thread.start();
            // The deadline watcher completes the future with TimedOut (and interrupts the handler) when it passes.
            result = end.get();
        } catch (InterruptedException e) {
            // This orchestrating thread was interrupted (shutdown of the executor): the attempt is given back.
            Thread.currentThread().interrupt();
            end.complete(new AttemptResult.Abandoned());
            thread.interrupt();
            result = end.join();
        } catch (ExecutionException e) {
            throw new IllegalStateException("unreachable: invoke() never completes exceptionally", e);
        } finally {
            runs.remove(run);
        }
        if (result instanceof AttemptResult.Abandoned) {
            thread.interrupt();
        }
        metrics.handled(admitted.jobType(), resultTag(result), Duration.ofNanos(System.nanoTime() - t0));
        context.end();
        return new Attempted(running, m, admitted, result, thread, context, run.deadlineNanos(), deadline);
    }

    /**
     * After the attempt's handler ended, on the job's thread (its working slot may already be the next job's):
     * performs the effects the handler deferred to its success ({@link io.poisonguard.handler.JobContext#onceOnSuccess}),
     * or drops them if it did not succeed. A deferred effect that throws fails the attempt as the handler throwing
     * it would have.
     */
    Attempted afterHandler(Attempted a) {
        RecordedEffects effects = a.effects();
        if (effects == null || !effects.hasDeferred()) {
            return a;
        }
        if (!(a.result() instanceof AttemptResult.Succeeded)) {
            effects.dropDeferred();
            return a;
        }
        switch (heartbeat.standing(a.running())) {
            case TAKEN_OVER -> {
                // Another attempt holds the job and performs (and records) these effects itself; this one's ending write
                // finds the record not its own.
                effects.dropDeferred();
                LOG.warnf("Job %s: attempt %d succeeded after another attempt took the job over; its deferred effects are not"
                        + " performed", a.running().record().jobId(), a.running().record().attempt());
                return a;
            }
            case UNKNOWN -> {
                // Not known to be ours: neither perform the effects nor record a success without them. Given back uncounted.
                effects.dropDeferred();
                return a.withResult(new AttemptResult.StoreDown(new io.poisonguard.ledger.StoreUnavailable(
                        io.poisonguard.ledger.StoreUnavailable.LEDGER, false,
                        new IllegalStateException("the attempt's lease ran out and the ledger did not confirm it"))));
            }
            case OURS -> {
            }
        }
        AttemptResult result = deferredWithinDeadline(a, effects);
        return result instanceof AttemptResult.Succeeded ? a : a.withResult(result);
    }

    /**
     * At least this long after its handler returned, an attempt's deferred effects may run: a handler that succeeded a moment
     * before its deadline does not have its notice cut off on its way (sent, then unrecorded, then sent again).
     */
    static final Duration DEFERRED_GRACE = Duration.ofSeconds(10);

    /**
     * Performs the deferred effects on this (the job's) thread, within the attempt's deadline, or {@link #DEFERRED_GRACE}
     * after the handler returned if that is later (the lease is renewed until then): they are watched as the handler was, and
     * one still running then (a notice whose send hangs) is interrupted and the attempt ends TIMED_OUT, as at shutdown it is
     * given back. Without it the attempt never ended: its heartbeat stopped at the deadline and its lease lapsed into a crash
     * charged to the job, while the effect held the job's thread. Effects that all completed win over a cut that came as they
     * did. No thread of its own: the example's notice is deferred, so this is every healthy message's path.
     */
    private AttemptResult deferredWithinDeadline(Attempted a, RecordedEffects effects) {
        String jobId = a.running().record().jobId();
        long graceEnd = System.nanoTime() + DEFERRED_GRACE.toNanos();
        long deadlineNanos = a.deadlineNanos();
        if (graceEnd - deadlineNanos > 0) {
            deadlineNanos = graceEnd;
            a.running().renewUntil(clock.instant().plus(DEFERRED_GRACE).plus(config.consumer().heartbeatInterval()));
        }
        Run run = new Run(new CompletableFuture<>(), HandlerThread.of(Thread.currentThread()), deadlineNanos, a.deadline(), jobId,
                a.running().record().attempt(), new java.util.concurrent.CountDownLatch(1));
        runs.add(run);
        AttemptResult performed;
        try {
            performed = outcomeOf(jobId, effects::performDeferred);
        } finally {
            runs.remove(run);
        }
        if (run.end().complete(performed)) {
            return performed;
        }
        // Cut off (the deadline, or shutdown): its interrupt was for the effects, and must not reach the outcome's writes.
        // The watcher interrupts just after it ends the run; wait for that, then clear it.
        long until = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        boolean delivered = false;
        while (!delivered && System.nanoTime() - until < 0) {
            try {
                delivered = run.cutOff().await(until - System.nanoTime(), java.util.concurrent.TimeUnit.NANOSECONDS);
            } catch (InterruptedException cut) {
                // The cut-off's own interrupt, now cleared: the latch follows it at once.
            }
        }
        Thread.interrupted();
        // Every deferred effect was performed (and so is recorded) before the cut could stop one: the attempt succeeded.
        return performed instanceof AttemptResult.Succeeded ? performed : run.end().join();
    }

    /** Work whose end is an attempt's result: a handler, or the effects it deferred. */
    private interface Work {
        void run() throws Exception;
    }

    private AttemptResult invoke(JobHandler handler, Job job, RecordedEffects context) {
        return outcomeOf(job.jobId(), () -> handler.handle(job, context));
    }

    private AttemptResult outcomeOf(String jobId, Work work) {
        try {
            work.run();
            return new AttemptResult.Succeeded();
        } catch (VirtualMachineError e) {
            // The JVM may be damaged (out of memory, an internal error): this attempt counts as a crash
            // of the job, and the worker asks to be replaced. A stack overflow is the handler's own
            // recursion and leaves the JVM intact, so it is classified like any failure.
            if (e instanceof StackOverflowError) {
                return failed(e);
            }
            health.fatal(jobId, e.getClass().getSimpleName());
            return new AttemptResult.Crashed(e.getClass().getSimpleName());
        } catch (Throwable t) {
            if (t instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return failed(t);
        }
    }

    private AttemptResult failed(Throwable t) {
        // Each cause once: two exceptions may be each other's cause, and following getCause() alone would never end.
        for (Throwable c : Classifier.causeChain(t)) {
            if (c instanceof StoreUnavailable down) {
                return new AttemptResult.StoreDown(down);
            }
        }
        Failure f = classifier.classify(t);
        return new AttemptResult.Failed(f, new Signature(f.failureClass(), f.errorType(), Classifier.origin(t)));
    }

    /**
     * Before the outcome of an attempt cut off is written (at its deadline, or given back at shutdown): waits for its
     * handler to stop, while the heartbeat goes on renewing the attempt's lease, so the job stays out of every other
     * worker's hands. At the deadline it waits up to the stop grace; one that does not stop is stuck for good: the worker
     * reports itself not live, and the outcome says the handler still runs, so the job's next attempt does not start
     * beside it. At shutdown it waits a moment only ({@link #MIN_UNWIND}: the shutdown's budget is spent already), and
     * one still running is given back saying so, for the same reason: it runs until the process ends.
     */
    Attempted awaitCutOffStop(Attempted a) {
        boolean timedOut = a.result() instanceof AttemptResult.TimedOut;
        if (!(timedOut || a.result() instanceof AttemptResult.Abandoned) || !a.handlerThread().isAlive()) {
            return a;
        }
        // A handler interrupted a moment ago is given a little time to unwind even with no grace configured.
        Duration stopGrace = config.attempt().stopGrace();
        Duration grace = !timedOut || stopGrace.compareTo(MIN_UNWIND) < 0 ? MIN_UNWIND : stopGrace;
        // The lease (and the copy's visibility) stay renewed while the handler is waited for: however the grace compares
        // with a lease, no other worker takes the job while its cut-off handler may still run here.
        a.running().renewUntil(clock.instant().plus(grace).plus(config.consumer().heartbeatInterval()));
        // An interrupt already set on this thread (the attempt was given back because this thread was interrupted) would end
        // the wait at once and call a handler stuck that merely had not unwound yet: set aside for the wait, then restored.
        boolean interrupted = Thread.interrupted();
        boolean stopped;
        try {
            stopped = a.handlerThread().join(grace);
        } catch (InterruptedException e) {
            interrupted = true;
            stopped = timedOut || !a.handlerThread().isAlive();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (stopped) {
            return a;
        }
        health.stuck(a.running().record().jobId(), a.running().record().attempt());
        return a.withResult(timedOut ? new AttemptResult.TimedOut(((AttemptResult.TimedOut) a.result()).deadline(), true)
                : new AttemptResult.Abandoned(true));
    }

    /** Shutdown: gives back every attempt still running; returns how many. */
    int abandonAll() {
        int n = 0;
        for (Run r : runs) {
            if (r.cut(new AttemptResult.Abandoned())) {
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

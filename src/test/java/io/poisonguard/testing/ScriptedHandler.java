package io.poisonguard.testing;

import io.poisonguard.handler.Job;
import io.poisonguard.handler.JobContext;
import io.poisonguard.handler.JobHandler;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A test workload, job type {@code scripted}, whose body says what the handler does: {@code ok},
 * {@code error} (throws OutOfMemoryError, as seed 000's 4 MB input does), {@code hang} (sleeps, and
 * stops when interrupted), {@code hang-hard} (ignores interrupts until {@link #releaseStuck()}),
 * {@code illegal} (throws the same IllegalArgumentException every time), {@code deferred-slow} (returns 1.2 s in, having deferred an
 * effect that takes a second), {@code deferred-hang} (returns, having deferred an
 * effect to its success that hangs until interrupted on the first attempt, and returns on the later ones), {@code deferred-fails-once} (returns, having
 * deferred an effect to its success that fails the first time it runs, as a transient failure), {@code spin} (spins on the
 * CPU, deaf to its interrupt, until {@link #releaseSpinners()}), {@code deferred-spin} (returns, having deferred an effect
 * that does the same until {@link #releaseDeferredSpinners()}).
 */
@ApplicationScoped
public class ScriptedHandler implements JobHandler {
    public static final String JOB_TYPE = "scripted";

    /** The effect {@code deferred-fails-once} defers to the handler's success. */
    public static final String DEFERRED_EFFECT = "scripted-notice";

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> deferredRuns = new ConcurrentHashMap<>();
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicBoolean spinnersReleased = new AtomicBoolean();
    private final AtomicInteger spinning = new AtomicInteger();
    private final AtomicBoolean deferredSpinnersReleased = new AtomicBoolean();
    private final AtomicInteger deferredSpinning = new AtomicInteger();
    private final AtomicInteger running = new AtomicInteger();
    /** Told the job id as each handler starts, before it does anything else (a test's observer; none by default). */
    private volatile java.util.function.Consumer<String> atStart = jobId -> {
    };

    @Override
    public String jobType() {
        return JOB_TYPE;
    }

    @Override
    public Set<Integer> knownSchemaVersions() {
        return Set.of(1);
    }

    @Override
    public void handle(Job job, JobContext context) throws Exception {
        calls.computeIfAbsent(job.jobId(), k -> new AtomicInteger()).incrementAndGet();
        atStart.accept(job.jobId());
        running.incrementAndGet();
        try {
            switch (job.body().strip()) {
                case "ok" -> {
                }
                case "error" -> throw new OutOfMemoryError("Java heap space (scripted)");
                case "hang" -> Thread.sleep(Duration.ofMinutes(10));
                case "hang-hard" -> {
                    while (!released.get()) {
                        Thread.interrupted();
                        LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                    }
                }
                case "spin" -> {
                    spinning.incrementAndGet();
                    try {
                        while (!spinnersReleased.get()) {
                            Thread.onSpinWait();
                        }
                    } finally {
                        spinning.decrementAndGet();
                    }
                }
                case "deferred-spin" -> context.onceOnSuccess(DEFERRED_EFFECT, () -> {
                    // A deferred effect caught in a loop: never blocks, never looks at its interrupt.
                    deferredSpinning.incrementAndGet();
                    try {
                        while (!deferredSpinnersReleased.get()) {
                            Thread.onSpinWait();
                        }
                    } finally {
                        deferredSpinning.decrementAndGet();
                    }
                });
                case "illegal" -> throw new IllegalArgumentException("unsupported endpoint scheme");
                case "cyclic" -> {
                    // Two exceptions that are each other's cause: legal, and what some libraries' wrappers end up with.
                    IllegalArgumentException a = new IllegalArgumentException("unsupported endpoint scheme");
                    IllegalStateException b = new IllegalStateException("request failed", a);
                    a.initCause(b);
                    throw a;
                }
                case "deferred-slow" -> {
                    // Returns a moment before a 1.5 s deadline, having deferred an effect that takes a second.
                    Thread.sleep(Duration.ofMillis(1200));
                    context.onceOnSuccess(DEFERRED_EFFECT, () -> {
                        try {
                            Thread.sleep(Duration.ofSeconds(1));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException("the deferred effect was interrupted", e);
                        }
                    });
                }
                case "deferred-hang" -> context.onceOnSuccess(DEFERRED_EFFECT, () -> {
                    if (calls(job.jobId()) > 1) {
                        return;
                    }
                    try {
                        Thread.sleep(Duration.ofMinutes(10));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("the deferred effect was interrupted", e);
                    }
                });
                case "deferred-fails-once" -> context.onceOnSuccess(DEFERRED_EFFECT, () -> {
                    int n = deferredRuns.computeIfAbsent(job.jobId(), k -> new AtomicInteger()).incrementAndGet();
                    if (n == 1) {
                        throw io.poisonguard.failure.JobFailure.transientFailure("the notice's queue did not answer (scripted)");
                    }
                });
                default -> throw new IllegalStateException("unknown script " + job.body());
            }
        } finally {
            running.decrementAndGet();
        }
    }

    public int calls(String jobId) {
        AtomicInteger n = calls.get(jobId);
        return n == null ? 0 : n.get();
    }

    /** How often {@code deferred-fails-once}'s deferred effect ran for {@code jobId}. */
    public int deferredRuns(String jobId) {
        AtomicInteger n = deferredRuns.get(jobId);
        return n == null ? 0 : n.get();
    }

    /** Handler threads still inside {@link #handle}. */
    public int running() {
        return running.get();
    }

    /** Tells {@code observer} the job id as each handler starts. */
    public void atStart(java.util.function.Consumer<String> observer) {
        atStart = observer;
    }

    /** Handlers inside a {@code spin} loop now. */
    public int spinning() {
        return spinning.get();
    }

    /** Lets every {@code spin} handler return. */
    public void releaseSpinners() {
        spinnersReleased.set(true);
    }

    /** Deferred effects inside a {@code deferred-spin} loop now. */
    public int deferredSpinning() {
        return deferredSpinning.get();
    }

    /** Lets every {@code deferred-spin} effect return. */
    public void releaseDeferredSpinners() {
        deferredSpinnersReleased.set(true);
    }

    /** Lets every {@code hang-hard} handler return. */
    public void releaseStuck() {
        released.set(true);
    }

    /** Attributes of a scripted job. */
    public static Map<String, String> attributes(String jobId) {
        return Map.of("job-id", jobId, "tenant", "tenant-s", "job-type", JOB_TYPE, "schema-version", "1");
    }
}

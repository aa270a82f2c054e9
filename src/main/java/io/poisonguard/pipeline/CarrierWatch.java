package io.poisonguard.pipeline;

import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Whether the worker's virtual threads still run. The job's own steps (intake, outcome, lease renewals, the notices and
 * deletes) run on virtual threads, and those are not preempted: code that holds a carrier and never yields (a deferred
 * effect spinning on the CPU, a thread pinned while it blocks on a JDK that pins) stops every one of them once it holds
 * all the carriers (one, in the shipped images). Nothing on those threads can then notice it. This watch runs on a
 * platform thread of its own: every {@link #TICK} it starts a probe, a virtual thread that does nothing but say it ran,
 * and when a probe has waited {@link #LIMIT} the worker is unfit for good (liveness DOWN, so the orchestrator replaces
 * it, as for a stuck handler).
 *
 * <p>A pause of the whole process (a debugger, a SIGSTOP, a long GC) stops this thread too: a tick that comes much later
 * than asked starts the wait afresh, so only time the watch itself was running counts.
 */
@Singleton
public class CarrierWatch {
    /** How often a probe is started (and the wait checked). */
    static final Duration TICK = Duration.ofMillis(500);
    /** How long a probe may wait for a carrier before the worker is unfit. */
    static final Duration LIMIT = Duration.ofSeconds(10);
    /** A tick this late means the whole process was paused, not its carriers held. */
    static final Duration PAUSED = TICK.multipliedBy(4);

    private final WorkerHealth health;
    private final Executor probes;
    private volatile Thread thread;

    /** Set by a probe as it runs; read and cleared by the watch's thread only otherwise. */
    private volatile boolean probeOut;
    private long lastTick;
    private long waited;
    private boolean reported;

    @Inject
    public CarrierWatch(WorkerHealth health) {
        this(health, Executors.newVirtualThreadPerTaskExecutor());
    }

    /** {@code probes}: where each probe runs (virtual threads, but for a test). */
    CarrierWatch(WorkerHealth health, Executor probes) {
        this.health = health;
        this.probes = probes;
    }

    void onStart(@Observes StartupEvent event) {
        start();
    }

    void start() {
        lastTick = System.nanoTime();
        thread = Thread.ofPlatform().daemon().name("poison-guard-carrier-watch").start(this::watch);
    }

    @PreDestroy
    void stop() {
        Thread t = thread;
        if (t != null) {
            t.interrupt();
        }
    }

    private void watch() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(TICK);
            } catch (InterruptedException e) {
                return;
            }
            try {
                tick(System.nanoTime());
            } catch (RuntimeException e) {
                // A probe that could not be started (the executor closed at shutdown): the next tick tries again.
            }
        }
    }

    /** One step of the watch at {@code now} (nanoTime): counts the probe's wait, or starts the next probe. */
    void tick(long now) {
        long since = now - lastTick;
        lastTick = now;
        if (!probeOut) {
            waited = 0;
            probeOut = true;
            probes.execute(() -> probeOut = false);
            return;
        }
        if (since >= PAUSED.toNanos()) {
            // This thread did not run either: the process was paused. Its carriers may be fine; wait afresh.
            waited = 0;
            return;
        }
        waited += since;
        if (!reported && waited >= LIMIT.toNanos()) {
            reported = true;
            health.starved(Duration.ofNanos(waited));
        }
    }
}

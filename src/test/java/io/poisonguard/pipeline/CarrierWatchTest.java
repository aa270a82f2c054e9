package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.observability.Metrics;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.Executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The carrier watch's rules, driven tick by tick: probes run when the test lets them (a scheduler whose carriers are
 * held runs none), and time is the ticks' own.
 */
class CarrierWatchTest {
    static final long TICK = CarrierWatch.TICK.toNanos();

    final WorkerHealth health = new WorkerHealth(new Metrics(new SimpleMeterRegistry()));
    /** Probes started and not yet run. */
    final Queue<Runnable> waiting = new ArrayDeque<>();
    final Executor scheduler = waiting::add;
    final CarrierWatch watch = new CarrierWatch(health, scheduler);
    long now = 1_000_000_000L;

    private void ticks(int n, boolean carriersFree) {
        for (int i = 0; i < n; i++) {
            now += TICK;
            watch.tick(now);
            if (carriersFree) {
                Runnable r;
                while ((r = waiting.poll()) != null) {
                    r.run();
                }
            }
        }
    }

    @Test
    void aWorkerWhoseProbesRunStaysFit() {
        ticks(200, true);

        assertEquals(Optional.empty(), health.unfit(true));
    }

    @Test
    void aProbeThatWaitsTheLimitMakesTheWorkerUnfitForGood() {
        ticks(3, true);
        int toLimit = (int) (CarrierWatch.LIMIT.toNanos() / TICK);

        ticks(toLimit, false);
        assertEquals(Optional.empty(), health.unfit(true), "a probe that waited less than the limit");
        assertEquals(1, waiting.size(), "one probe out at a time, however long it waits");
        ticks(1, false);

        String why = health.unfit(false).orElseThrow();
        assertTrue(why.contains("virtual threads did not run for 10s"), why);
        ticks(10, true);
        assertTrue(health.unfit(false).isPresent(), "unfit for good: whatever held the carriers may hold them again");
    }

    @Test
    void aPauseOfTheWholeProcessStartsTheWaitAfresh() {
        ticks(2, true);
        ticks(1, false);
        // The watch's own thread did not run for a minute either (SIGSTOP, a debugger): the process was paused.
        now += java.time.Duration.ofMinutes(1).toNanos();
        watch.tick(now);
        ticks((int) (CarrierWatch.LIMIT.toNanos() / TICK) - 2, false);

        assertEquals(Optional.empty(), health.unfit(true), "only time the watch ran counts");
    }

    @Test
    void theStarvationIsSaidFirstEvenWhenOtherReasonsFilledTheirList() {
        for (int i = 0; i < 8; i++) {
            health.fatal("job-" + i, "InternalError");
        }
        ticks(1, true);
        ticks((int) (CarrierWatch.LIMIT.toNanos() / TICK) + 1, false);

        String why = health.unfit(false).orElseThrow();
        assertTrue(why.startsWith("the worker's virtual threads did not run"), why);
        assertTrue(!why.contains("job-0"), "no job named when not asked: " + why);
    }
}

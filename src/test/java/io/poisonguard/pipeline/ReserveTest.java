package io.poisonguard.pipeline;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The prefetched reserve, sized from how long handlers hold their slot against how long a refill takes. */
class ReserveTest {
    private static final long MS = 1_000_000;

    private static Reserve observed(Reserve r, long handlerMs, long refillMs, int times) {
        for (int i = 0; i < times; i++) {
            r.handlerRan(handlerMs * MS);
            r.refilled(refillMs * MS);
        }
        return r;
    }

    @Test
    void withoutObservationsTheReserveIsTheDefault() {
        assertEquals(10, Reserve.sized(8).size());
        Reserve onlyHandlers = Reserve.sized(8);
        onlyHandlers.handlerRan(MS);
        assertEquals(10, onlyHandlers.size(), "no refill observed yet");
    }

    @Test
    void itCoversTwiceTheJobsSpentDuringARefill() {
        // Concurrency 8, handlers of 10 ms, refills of 9 ms: 7.2 jobs spent during a refill, a reserve of 15.
        assertEquals(15, observed(Reserve.sized(8), 10, 9, 1).size());
    }

    @Test
    void slowJobsKeepTheDefaultAndFastOnesStopAtTheCeiling() {
        assertEquals(10, observed(Reserve.sized(8), 500, 10, 1).size());
        assertEquals(96, observed(Reserve.sized(8), 1, 50, 1).size(), "twelve times the concurrency");
        assertEquals(100, observed(Reserve.sized(32), 1, 50, 1).size(), "ten full receives");
    }

    @Test
    void aLowConcurrencyGrowsToTwelveTimesItsConcurrencyAtMost() {
        assertEquals(1, Reserve.sized(1).floor());
        assertEquals(12, observed(Reserve.sized(1), 1, 50, 1).size());
        assertEquals(48, observed(Reserve.sized(4), 1, 50, 1).size());
    }

    @Test
    void aSetPrefetchDoesNotMove() {
        Reserve fixed = observed(Reserve.fixed(8, 3), 1, 50, 10);
        assertFalse(fixed.adapts());
        assertEquals(3, fixed.size());
        assertEquals(0, observed(Reserve.fixed(8, 0), 1, 50, 10).size());
    }

    @Test
    void oneOddObservationMovesItALittleAndASteadyChangeMovesItAll() {
        Reserve r = observed(Reserve.sized(8), 10, 9, 1);
        r.handlerRan(1000 * MS); // one handler that took a second
        int afterOne = r.size();
        assertTrue(afterOne < 15 && afterOne >= 10, "one slow job moved the reserve from 15 to " + afterOne);
        observed(r, 1000, 9, 200);
        assertEquals(10, r.size(), "jobs that now take a second each bring it back to the default");
        observed(r, 1, 9, 200);
        assertEquals(96, r.size(), "jobs that now take 1 ms each take it to the ceiling");
    }

    @Test
    void jobsTooSlowForAPrefetchedMessageToStartInTimeShrinkItToNone() {
        java.time.Duration halfVisibility = java.time.Duration.ofSeconds(30);
        // 30-minute jobs at concurrency 8: a slot frees every 225 s, so any message held would be given back after 30 s.
        assertEquals(0, observed(Reserve.sized(8, halfVisibility), 30 * 60_000, 10, 1).size());
        Reserve noRefillYet = Reserve.sized(8, halfVisibility);
        noRefillYet.handlerRan(30 * 60_000 * MS);
        assertEquals(0, noRefillYet.size(), "before any refill is seen too");
        // 1-minute jobs: a slot frees every 7.5 s; two held wait 15 s at most on average, half of what they may.
        assertEquals(2, observed(Reserve.sized(8, halfVisibility), 60_000, 10, 1).size());
        // 10-second jobs: the default.
        assertEquals(10, observed(Reserve.sized(8, halfVisibility), 10_000, 10, 1).size());
    }
}

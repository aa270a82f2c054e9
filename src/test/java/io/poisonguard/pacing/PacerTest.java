package io.poisonguard.pacing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pacer's spacing, on a clock that moves only when told. */
class PacerTest {
    private static final long MS = 1_000_000L;

    @Test
    void atAHighRateCallsThatComeTogetherGoWithoutSleepingWithinTheAllowance() throws InterruptedException {
        // At 10000 a second the spacing is a tenth of a millisecond: sleeping that little costs a thread's wake-up each
        // time, and with a turn held through every sleep the wake-ups queue one behind the other (about 1000 calls a
        // second on a loaded machine, a tenth of the rate). A short burst within the quota's margin goes at once.
        FakeTime time = new FakeTime();
        Pacer pacer = new Pacer(10_000, time);
        for (int i = 0; i < 20; i++) {
            pacer.acquire();
        }
        assertEquals(List.of(), time.sleeps);
    }

    @Test
    void atAHighRateABurstBeyondTheAllowanceIsSpacedAtTheRate() throws InterruptedException {
        FakeTime time = new FakeTime();
        Pacer pacer = new Pacer(10_000, time);
        long start = time.now;
        for (int i = 0; i < 1000; i++) {
            pacer.acquire();
        }
        // 1000 calls at 10000 a second (with its 2% margin) take about a tenth of a second, less the allowance.
        long took = time.now - start;
        assertTrue(took >= 90 * MS && took <= 102 * MS, "took " + took / 1e6 + " ms");
    }

    @Test
    void atALowRateEveryCallWaitsTheWholeIntervalAfterTheLastAsBefore() throws InterruptedException {
        FakeTime time = new FakeTime();
        Pacer pacer = new Pacer(15, time);
        List<Long> went = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            pacer.acquire();
            went.add(time.now);
        }
        long interval = (long) (Pacer.MARGIN * 1_000_000_000L / 15);
        for (int i = 1; i < went.size(); i++) {
            assertEquals(interval, went.get(i) - went.get(i - 1));
        }
    }

    @Test
    void aLateWakeUpIsNotMadeUpByTheCallsAfterIt() throws InterruptedException {
        // Every sleeper wakes 30 ms late: each gap is measured from when the last call went, so none comes closer.
        FakeTime time = new FakeTime(slept -> 30 * MS);
        Pacer pacer = new Pacer(15, time);
        long interval = (long) (Pacer.MARGIN * 1_000_000_000L / 15);
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 5; i++) {
            pacer.acquire();
            if (previous != Long.MIN_VALUE) {
                assertTrue(time.now - previous >= interval);
            }
            previous = time.now;
        }
    }

    @Test
    void afterAQuietSpellOnlyTheAllowanceGoesAtOnceNotTheTurnsThatWereNotUsed() throws InterruptedException {
        FakeTime time = new FakeTime();
        Pacer pacer = new Pacer(10_000, time);
        pacer.acquire();
        time.advance(2_000 * MS);
        int atOnce = 0;
        long at = time.now;
        for (int i = 0; i < 500; i++) {
            pacer.acquire();
            if (time.now == at) {
                atOnce++;
            }
        }
        long interval = (long) (Pacer.MARGIN * 1_000_000_000L / 10_000);
        assertEquals(Pacer.toleranceNanos(10_000) / interval + 1, atOnce);
    }

    @Test
    void aTurnBeyondTheWaitIsRefusedAndNothingIsTaken() throws InterruptedException {
        FakeTime time = new FakeTime();
        Pacer pacer = new Pacer(15, time);
        assertTrue(pacer.tryAcquire(Duration.ofMillis(10)));
        long first = time.now;
        assertFalse(pacer.tryAcquire(Duration.ofMillis(10)));
        assertEquals(first, time.now);
        assertTrue(pacer.tryAcquire(Duration.ofMillis(100)));
        assertEquals((long) (Pacer.MARGIN * 1_000_000_000L / 15), time.now - first);
    }

    @Test
    void noAllowanceAtRatesWhoseMarginCannotHoldOne() {
        assertEquals(0, Pacer.toleranceNanos(15));
        assertEquals(0, Pacer.toleranceNanos(50));
        assertTrue(Pacer.toleranceNanos(1000) > 0);
        assertEquals(Pacer.MAX_TOLERANCE.toNanos(), Pacer.toleranceNanos(10_000));
    }
}

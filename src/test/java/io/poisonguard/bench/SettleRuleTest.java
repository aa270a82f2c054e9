package io.poisonguard.bench;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When a bench warm-up counts as settled: each of its last three steps' JIT shares under the line. The sequences are
 * warm-up steps printed by benches of 2026-12-07 (the JIT's share of the consumer's CPU over each 3000 jobs).
 */
class SettleRuleTest {
    private static boolean quiet(Double... shares) {
        return BenchIT.quiet(Arrays.asList(shares), 3, 0.10);
    }

    @Test
    void theBenchAsksForThreeQuietStepsUnlessToldOtherwise() {
        assertEquals(3, BenchIT.SETTLE_STEPS);
        assertEquals(0.10, BenchIT.SETTLE_JIT);
    }

    @Test
    void aBurstFollowedByTwoQuietStepsIsNotSettled() {
        // naive's pattern: a step of 27-34% between pairs of quiet ones; two quiet steps ended six warm-ups in one session.
        assertFalse(quiet(0.22, 0.30, 0.07, 0.06));
        assertFalse(quiet(0.34, 0.05, 0.04));
        assertFalse(quiet(0.26, 0.05, 0.01), "poison-guard@32 once ended its warm-up here, then compiled 15% of its window");
    }

    @Test
    void twoStepsJustUnderTheLineAfterOneAboveItAreNotSettled() {
        // naive@32's warm-up that stopped at 18000 jobs: 10% (rounded, just under the line), then 9%, after a busier step.
        assertFalse(quiet(0.16, 0.099, 0.09));
    }

    @Test
    void threeQuietStepsInARowAreSettled() {
        assertTrue(quiet(0.37, 0.17, 0.06, 0.03, 0.04));
        assertTrue(quiet(0.08, 0.05, 0.02));
    }

    @Test
    void aQuietRunBrokenByABurstStartsCountingAgain() {
        // poison-guard's warm-up at 8 in one run: 13%, 2%, 13%, 3%, 3%: not settled until a third quiet step after the burst.
        assertFalse(quiet(0.13, 0.02, 0.13, 0.03, 0.03));
        assertTrue(quiet(0.13, 0.02, 0.13, 0.03, 0.03, 0.02));
    }

    @Test
    void fewerStepsThanTheRuleAsksAreNotSettled() {
        assertFalse(quiet(0.01, 0.01));
        assertFalse(BenchIT.quiet(List.of(), 3, 0.10));
    }

    @Test
    void aStepOnTheLineIsNotQuiet() {
        assertFalse(quiet(0.05, 0.10, 0.05));
    }

    @Test
    void aJvmWithoutCompilerCountersIsWarmedItsFixedCountOnly() {
        assertTrue(quiet(Double.NaN));
    }
}

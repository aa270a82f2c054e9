package io.poisonguard.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The benchmark's report: the verdict on medians, and each run and each round's ratio beside it. */
class BenchReportTest {
    private static BenchIT.Result run(String consumer, int concurrency, double rate) {
        return run(consumer, concurrency, rate, BenchIT.Warmth.SETTLED);
    }

    private static BenchIT.Result run(String consumer, int concurrency, double rate, BenchIT.Warmth warmth) {
        return run(consumer, concurrency, rate, warmth, warmth == BenchIT.Warmth.CAPPED ? 0.33 : 0.05);
    }

    private static BenchIT.Result run(String consumer, int concurrency, double rate, BenchIT.Warmth warmth, double jitShare) {
        int messages = 1000;
        int warmedUp = warmth == BenchIT.Warmth.CAPPED ? BenchIT.WARMUP_MAX : consumer.equals("naive") ? 15000 : 21000;
        return new BenchIT.Result(consumer, concurrency, messages, messages / rate, Map.of("DynamoDb.PutItem", 2L * messages,
                "Sqs.ReceiveMessage", (long) messages / 8), 1.0, jitShare, 0.5, 0.5, 10, 20, warmedUp, warmth);
    }

    @Test
    void theLedgerFloorIsAnotherRowWithItsRatioInTheVerdictLineAndTakesNoPartInTheVerdict() {
        String report = BenchReport.render(List.of(
                run("naive", 8, 2000), run("ledger-floor", 8, 1420), run("poison-guard", 8, 800)), 1000, 1000, 1, false);

        assertTrue(report.lines().anyMatch(l -> l.startsWith("ledger-floor ") && l.trim().split("\\s+")[1].equals("8")
                && l.trim().split("\\s+")[3].equals("0.71")), report);
        // poison-guard's 0.40 fails the line whatever the floor does; the floor's ratio is printed beside idempotent-naive's.
        assertTrue(report.contains("VERDICT: FAIL (throughput 0.40 of naive at 8 (target 0.45)"), report);
        assertTrue(report.contains(" vs ledger-floor 8:0.71"), report);
        // Without the floor in the run, the verdict line does not name it.
        String without = BenchReport.render(List.of(run("naive", 8, 2000), run("poison-guard", 8, 800)), 1000, 1000, 1, false);
        assertFalse(without.contains("ledger-floor"), without);
    }

    @Test
    void aWarmUpThatEndedBetweenTwoBurstsOfCompilingCannotMakeAPassEither() {
        // Both warm-ups ended on their quiet steps, yet the JIT took 12% of naive's CPU in the window.
        String report = BenchReport.render(List.of(
                run("naive", 32, 2000, BenchIT.Warmth.SETTLED, 0.12), run("poison-guard", 32, 1000),
                run("poison-guard", 32, 1000), run("naive", 32, 2000, BenchIT.Warmth.SETTLED, 0.12)), 1000, 1000, 2, false);

        assertTrue(report.contains("VERDICT: UNSETTLED (naive@32 was still compiling in the window after a warm-up that looked"
                + " settled in 2 of 2 runs (JIT 12% of its CPU): raise --warmup)"), report);
    }

    @Test
    void aBaselineStillCompilingAtTheWarmUpCapCannotMakeAPass() {
        // naive's warm-up reached the cap with its JIT still busy in both rounds: a baseline slower than it will be
        // flatters every ratio taken against it, so 0.50 of it is not a pass.
        String report = BenchReport.render(List.of(
                run("naive", 8, 2000, BenchIT.Warmth.CAPPED), run("poison-guard", 8, 1000),
                run("poison-guard", 8, 1000), run("naive", 8, 2000, BenchIT.Warmth.CAPPED)), 1000, 1000, 2, false);

        assertFalse(report.contains("VERDICT: PASS"), report);
        assertTrue(report.contains("VERDICT: UNSETTLED (naive@8 reached the " + BenchIT.WARMUP_MAX
                + "-job warm-up cap still compiling in 2 of 2 runs (JIT 33% of its CPU in the window)"), report);
        // The runs that stopped at the cap are marked where the warm-ups are listed.
        assertTrue(report.contains("\n  naive@8                            " + BenchIT.WARMUP_MAX + " (cap, unsettled), " + BenchIT.WARMUP_MAX
                + " (cap, unsettled)\n"), report);
    }

    @Test
    void aMissedTargetStaysAFailAndStillNamesTheUnsettledRuns() {
        String report = BenchReport.render(List.of(
                run("naive", 8, 2000), run("poison-guard", 8, 600, BenchIT.Warmth.CAPPED)), 1000, 1000, 1, false);

        assertTrue(report.contains("VERDICT: FAIL (throughput 0.30 of naive at 8 (target 0.45); poison-guard@8 reached the "
                + BenchIT.WARMUP_MAX + "-job warm-up cap still compiling in 1 of 1 run"), report);
    }

    @Test
    void aFixedWarmUpIsNotJudgedButSaysSo() {
        // --warmup-max equal to --warmup: the user chose the warm-up's length, so the JIT was not waited for.
        String report = BenchReport.render(List.of(
                run("naive", 8, 2000, BenchIT.Warmth.FIXED), run("poison-guard", 8, 1000, BenchIT.Warmth.FIXED)), 1000, 1000, 1, false);

        assertTrue(report.contains("VERDICT: PASS"), report);
        assertTrue(report.contains("(fixed warm-ups, the JIT not waited for)"), report);
    }

    @Test
    void eachRoundsRatioIsTakenWithinTheRoundAndEveryRunIsListedInOrder() {
        // Round 1 on a fast phase of the machine, round 2 on a slow one: every consumer moves together.
        String report = BenchReport.render(List.of(
                run("naive", 8, 2000), run("poison-guard", 8, 1000),
                run("poison-guard", 8, 400), run("naive", 8, 1000)), 1000, 1000, 2, false);

        assertTrue(report.matches("(?s).*poison-guard/naive in each round @8\\s+0\\.50, 0\\.40\n.*"), report);
        assertTrue(report.matches("(?s).*\\n  naive@8\\s+2000, 1000\n.*"), report);
        assertTrue(report.matches("(?s).*\\n  poison-guard@8\\s+1000, 400\n.*"), report);
        // The verdict stays on the medians: 700 against 1500 is 0.47.
        assertTrue(report.contains("VERDICT: PASS"), report);
        // How long each run was warmed before its window (a consumer's warm-up lasts until its JIT has settled).
        assertTrue(report.matches("(?s).*Warm-up drained before each window.*\n  poison-guard@8\\s+21000, 21000\n.*"), report);
        // Each window's size and length: 1000 jobs at 400/s took 2.5 s.
        assertTrue(report.matches("(?s).*Windows measured.*\n  poison-guard@8\\s+1000 in 1\\.00, 1000 in 2\\.50\n.*"), report);
    }

    @Test
    void aWindowIsToppedUpToLastTheSameTimeForAFasterConsumer() {
        double seconds = BenchIT.WINDOW_SECONDS;
        // A consumer at 1800 jobs/s needs 1800 x seconds jobs; 8000 already queued count toward them.
        assertEquals(Math.max(0, (int) (1800 * seconds) - 8000), BenchIT.windowTopUp(8000, 1800));
        // A slow one already has more than it drains in that time: nothing is added.
        assertEquals(0, BenchIT.windowTopUp(8000, 8000 / seconds / 2));
        // Whole batches of ten.
        assertEquals(0, BenchIT.windowTopUp(0, 1001 / seconds) % 10);
    }

    @Test
    void oneRoundListsNoRoundsSection() {
        String report = BenchReport.render(List.of(run("naive", 8, 2000), run("poison-guard", 8, 1000)), 1000, 1000, 1, false);
        org.junit.jupiter.api.Assertions.assertFalse(report.contains("Each run"), report);
        assertTrue(report.matches("(?s).*\n  naive@8\\s+15000\n.*"), report);
    }
}

package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LadderLintTest {
    private static final Duration FOUR_DAYS = Duration.ofDays(4);
    private static final long SEED = 2;

    /**
     * Seed 002: "a 300-second start, a 2x multiplier", each delay base*2^(n-1) plus a uniform slice of
     * it, i.e. uniform in [300*2^(n-1), 600*2^(n-1)): equal jitter under a 600 s ceiling. 10 max
     * attempts, a 16-hour cutoff, no cap of its own (ours is the SQS visibility limit).
     */
    static ClassPolicy seed002() {
        return new ClassPolicy(10, new Ladder(Duration.ofSeconds(600), 2, Ladder.SQS_MAX_VISIBILITY, Jitter.EQUAL),
                Optional.of(Duration.ofHours(16)));
    }

    private static LadderReport report(ClassPolicy policy, Duration retention, int chains) {
        return LadderLint.report(FailureClass.THROTTLED, policy, retention, Duration.ZERO, chains, SEED);
    }

    private static Duration clock(int hours, int minutes) {
        return Duration.ofHours(hours).plusMinutes(minutes);
    }

    @Test
    void seed002ZeroJitterClimbSchedulesAttempts6And7AndStopsAtAttempt8OnTheCutoff() {
        LadderReport report = report(seed002(), FOUR_DAYS, 1_000);
        List<ScheduleRow> rows = report.schedule();

        assertEquals(8, rows.size());
        assertEquals(Duration.ZERO, rows.get(0).start());
        assertEquals(Duration.ofMinutes(5), rows.get(0).floor(), "seed 002's first delay is 00:05:00");
        assertEquals(clock(2, 35), rows.get(5).start(), "attempt 6 starts at 02:35:00");
        assertEquals(clock(2, 40), rows.get(5).floor());
        assertEquals(clock(5, 15), rows.get(6).start(), "attempt 7 starts at 05:15:00");
        assertEquals(clock(5, 20), rows.get(6).floor());
        assertTrue(rows.get(6).retried());
        assertEquals(clock(10, 35), rows.get(7).start(), "attempt 8 starts at 10:35:00");
        assertEquals(Optional.of(StopCondition.CUTOFF), rows.get(7).stop(), "attempt 8's retry would end past 16 h");
        assertEquals(7, report.fastest().lastScheduled());
    }

    @Test
    void seed002WithLiveJitterLastSchedulesAttempt6Or7AndNeverReachesMaxAttempts() {
        // 100,000 chains as in the seed: one share's standard error is 0.16 points.
        LadderReport report = report(seed002(), FOUR_DAYS, 100_000);
        SimulatedChains sim = report.simulated();

        assertEquals(Set.of(6, 7), sim.lastScheduled().keySet());
        assertEquals(0.4778, sim.share(sim.lastScheduled().get(6)), 0.01, "seed 002: 47.78% stop after scheduling attempt 6");
        assertEquals(0.5222, sim.share(sim.lastScheduled().get(7)), 0.01, "seed 002: 52.22% stop after scheduling attempt 7");
        assertEquals(Map.of(StopCondition.CUTOFF, 100_000), sim.stops());
        assertEquals(0, sim.reachedLimit(), "chains that reached MaxAttempts=10: 0");
    }

    @Test
    void seed002MaxAttemptsIsADeadSettingStoppedByTheCutoff() {
        LadderReport report = report(seed002(), FOUR_DAYS, 20_000);

        assertTrue(report.dead());
        assertEquals(Reach.NEVER, report.reach());
        assertEquals(StopCondition.CUTOFF, report.fastest().stop());
        assertTrue(report.verdict().startsWith("attempt 10 can never be reached"), report.verdict());
        assertTrue(report.verdict().contains("the cutoff of 16h"), report.verdict());
    }

    @Test
    void raisingSeed002sMaxAttemptsTo20ChangesNothing() {
        ClassPolicy twenty = new ClassPolicy(20, seed002().ladder(), seed002().cutoff());
        LadderReport ten = report(seed002(), FOUR_DAYS, 20_000);
        LadderReport report = report(twenty, FOUR_DAYS, 20_000);

        assertTrue(report.dead());
        assertEquals(ten.simulated().lastScheduled(), report.simulated().lastScheduled());
    }

    @Test
    void seed002ReachesItsLimitWhenTheLimitIsLowEnough() {
        // Attempt 7 always starts before 10:30:00 (the ceilings' sum), well inside 16 h.
        LadderReport report = report(new ClassPolicy(7, seed002().ladder(), seed002().cutoff()), FOUR_DAYS, 20_000);

        assertFalse(report.dead());
        assertEquals(Reach.ALWAYS, report.reach());
        assertEquals(Map.of(StopCondition.ATTEMPT_LIMIT, 20_000), report.simulated().stops());
        assertEquals(20_000, report.simulated().reachedLimit());
    }

    @Test
    void aLimitThatOnlyJitterSometimesReachesIsNotDeadButSaysHowOften() {
        // Attempt 8 starts within 16 h in about 52% of chains (seed 002's share that scheduled attempt 7).
        LadderReport report = report(new ClassPolicy(8, seed002().ladder(), seed002().cutoff()), FOUR_DAYS, 20_000);

        assertFalse(report.dead());
        assertEquals(Reach.SOMETIMES, report.reach());
        assertEquals(0.52, report.simulated().share(report.simulated().reachedLimit()), 0.02);
        assertTrue(report.verdict().contains("is reached by only"), report.verdict());
    }

    @Test
    void fullJitterReportsAFloorOfZeroSoTheFastestClimbStartsEveryAttemptAtOnce() {
        ClassPolicy policy = new ClassPolicy(5, new Ladder(Duration.ofSeconds(2), 3, Duration.ofMinutes(5), Jitter.FULL), Optional.empty());
        LadderReport report = report(policy, FOUR_DAYS, 20_000);

        for (ScheduleRow row : report.schedule()) {
            assertEquals(Duration.ZERO, row.floor(), "attempt " + row.attempt());
            assertEquals(Duration.ZERO, row.start(), "attempt " + row.attempt());
        }
        assertEquals(Duration.ofSeconds(54), report.schedule().get(3).ceiling());
        assertEquals(Reach.ALWAYS, report.reach());
    }

    @Test
    void noJitterDrawsTheCeilingSoFloorAndCeilingAgree() {
        ClassPolicy policy = new ClassPolicy(4, new Ladder(Duration.ofSeconds(10), 2, Duration.ofMinutes(5), Jitter.NONE), Optional.empty());
        LadderReport report = report(policy, FOUR_DAYS, 1_000);

        assertEquals(Duration.ofSeconds(70), report.schedule().get(3).start());
        assertEquals(report.fastest(), report.slowest());
        assertEquals(Map.of(2 + 1, 1_000), report.simulated().lastScheduled());
    }

    @Test
    void aShortQueueRetentionIsTheStopConditionWhenNoCutoffComesFirst() {
        ClassPolicy noCutoff = new ClassPolicy(10, seed002().ladder(), Optional.empty());
        LadderReport report = report(noCutoff, Duration.ofHours(16), 20_000);

        assertTrue(report.dead());
        assertEquals(Optional.of(StopCondition.RETENTION), report.schedule().getLast().stop());
        assertEquals(Map.of(StopCondition.RETENTION, 20_000), report.simulated().stops());
        assertTrue(report.verdict().contains("the queue retention of 16h"), report.verdict());
    }

    @Test
    void theCutoffWinsOverTheRetentionWhenARetryWouldStartPastBoth() {
        // The service quarantines on the cutoff as the attempt fails, before SQS could delete the message.
        LadderReport report = report(seed002(), Duration.ofHours(12), 20_000);

        assertEquals(Optional.of(StopCondition.CUTOFF), report.schedule().getLast().stop(), "attempt 8's retry at 16:35:00 passes both");
        assertEquals(20_000, report.simulated().stops().get(StopCondition.CUTOFF) + report.simulated().stops().get(StopCondition.RETENTION));
        assertTrue(report.simulated().stops().get(StopCondition.RETENTION) > 0, "retries landing between 12 h and 16 h are deleted by SQS");
    }

    @Test
    void attemptTimeDelaysEveryStartAndCanKillALimitThatFitsWithoutIt() {
        ClassPolicy policy = new ClassPolicy(3, new Ladder(Duration.ofSeconds(60), 1, Duration.ofSeconds(60), Jitter.NONE),
                Optional.of(Duration.ofMinutes(3)));

        LadderReport instant = LadderLint.report(FailureClass.TRANSIENT, policy, FOUR_DAYS, Duration.ZERO, 100, SEED);
        LadderReport slow = LadderLint.report(FailureClass.TRANSIENT, policy, FOUR_DAYS, Duration.ofSeconds(60), 100, SEED);

        assertEquals(Duration.ofSeconds(120), instant.schedule().get(2).start());
        assertFalse(instant.dead());
        assertEquals(Duration.ofSeconds(120), slow.schedule().get(1).start());
        assertTrue(slow.dead(), "attempt 3 would start at 4 min, past the 3 min cutoff");
    }

    @Test
    void theLintReportsEveryGivenClassInFailureClassOrderWithTheSameNumbersAsAlone() {
        ClassPolicy small = new ClassPolicy(3, new Ladder(Duration.ofSeconds(5), 2, Duration.ofMinutes(2), Jitter.FULL), Optional.empty());
        List<LadderReport> reports = LadderLint.lint(Map.of(FailureClass.CRASH, small, FailureClass.THROTTLED, seed002()),
                FOUR_DAYS, Duration.ZERO, 5_000, SEED);

        assertEquals(List.of(FailureClass.THROTTLED, FailureClass.CRASH), reports.stream().map(LadderReport::failureClass).toList());
        assertEquals(List.of(true, false), reports.stream().map(LadderReport::dead).toList());
        assertEquals(report(seed002(), FOUR_DAYS, 5_000).simulated(), reports.getFirst().simulated());
    }
}

package io.poisonguard.ladder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReachabilityTest {
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration SIXTEEN_HOURS = Duration.ofHours(16);

    /** Seed 002: a 300-second start, a 2x multiplier, 10 max attempts, a 16-hour cutoff. */
    private static Ladder seed002(Jitter jitter) {
        return new Ladder(Duration.ofSeconds(300), 2, Ladder.SQS_MAX_VISIBILITY, jitter);
    }

    @ParameterizedTest
    @EnumSource(value = Jitter.class, names = {"NONE", "EQUAL"})
    void seed002TenAttemptsUnderASixteenHourCutoffCanNeverBeReached(Jitter jitter) {
        Optional<String> why = Reachability.unreachable(seed002(jitter), 10, LEASE, SIXTEEN_HOURS, "cutoff");

        assertTrue(why.isPresent(), "seed 002's MaxAttempts=10 is a dead setting");
        assertTrue(why.get().contains("attempt 10 can never be reached"), why.get());
        assertTrue(why.get().contains("cutoff of 16h"), why.get());
    }

    @Test
    void seed002WithFullJitterIsReportedAsNotAlwaysReached() {
        Optional<String> why = Reachability.unreachable(seed002(Jitter.FULL), 10, LEASE, SIXTEEN_HOURS, "cutoff");

        assertTrue(why.isPresent());
        assertTrue(why.get().contains("is not always reached"), why.get());
    }

    @Test
    void underTheSeed002LadderWithoutJitterEightAttemptsFitSixteenHoursAndNineDoNot() {
        // Worst case of attempt 8: 300+600+...+19200 s of delay plus 7 leases = 38,520 s (10.7 h);
        // attempt 9 adds 38,400 s more and lands at 21.4 h.
        assertEquals(Duration.ofSeconds(38_520), Reachability.worstCaseStartOfLastAttempt(seed002(Jitter.NONE), 8, LEASE));
        assertTrue(Reachability.unreachable(seed002(Jitter.NONE), 8, LEASE, SIXTEEN_HOURS, "cutoff").isEmpty());
        assertTrue(Reachability.unreachable(seed002(Jitter.NONE), 9, LEASE, SIXTEEN_HOURS, "cutoff").isPresent());
    }

    @Test
    void aSmallLadderWithinItsWindowIsReachable() {
        Ladder ladder = new Ladder(Duration.ofSeconds(1), 2, Duration.ofSeconds(10), Jitter.FULL);

        assertEquals(Optional.empty(), Reachability.unreachable(ladder, 3, Duration.ofSeconds(30), Duration.ofHours(1), "cutoff"));
    }

    @Test
    void aLimitWhoseLastAttemptStartsExactlyAtTheWindowIsUnreachable() {
        Ladder ladder = new Ladder(Duration.ofSeconds(30), 1, Duration.ofSeconds(30), Jitter.NONE);
        // Attempt 3 starts at worst after 2 x (30 s lease + 30 s delay) = 120 s.
        assertTrue(Reachability.unreachable(ladder, 3, Duration.ofSeconds(30), Duration.ofSeconds(120), "w").isPresent());
        assertTrue(Reachability.unreachable(ladder, 3, Duration.ofSeconds(30), Duration.ofSeconds(121), "w").isEmpty());
    }

    @Test
    void theFirstAttemptStartsAtOnce() {
        assertEquals(Duration.ZERO, Reachability.worstCaseStartOfLastAttempt(seed002(Jitter.NONE), 1, LEASE));
        assertEquals(Duration.ZERO, Reachability.bestCaseStartOfLastAttempt(seed002(Jitter.NONE), 1));
    }

    @Test
    void durationsAreWrittenForHumans() {
        assertEquals("90s", Reachability.human(Duration.ofSeconds(90)));
        assertEquals("2m30s", Reachability.human(Duration.ofSeconds(150)));
        assertEquals("16h", Reachability.human(Duration.ofHours(16)));
        assertEquals("10h35m", Reachability.human(Duration.ofMinutes(635)));
    }
}

package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ChainWalkTest {
    private static final Ladder MINUTE = new Ladder(Duration.ofMinutes(1), 1, Duration.ofMinutes(1), Jitter.NONE);

    private static ChainWalk walk(int maxAttempts, Optional<Duration> cutoff, Duration retention) {
        return new ChainWalk(new ClassPolicy(maxAttempts, MINUTE, cutoff), retention, Duration.ZERO);
    }

    @Test
    void aRetryStartingExactlyAtTheCutoffStillRunsAsInDecisions() {
        // Decisions quarantines only when now + delay is after firstSeen + cutoff.
        Chain chain = walk(10, Optional.of(Duration.ofMinutes(2)), Duration.ofDays(4)).fastest();

        assertEquals(List.of(Duration.ZERO, Duration.ofMinutes(1), Duration.ofMinutes(2)), chain.starts());
        assertEquals(StopCondition.CUTOFF, chain.stop());
        assertEquals(2, chain.lastScheduled());
    }

    @Test
    void theAttemptLimitStopsBeforeAnyDelayIsDrawn() {
        Chain chain = walk(2, Optional.of(Duration.ofMinutes(1)), Duration.ofMinutes(1)).walk(retry -> {
            if (retry > 1) {
                throw new AssertionError("no delay after the last attempt");
            }
            return Duration.ofMinutes(1);
        });

        assertEquals(StopCondition.ATTEMPT_LIMIT, chain.stop());
        assertEquals(2, chain.lastAttempt());
    }

    @Test
    void aSingleAttemptLimitSchedulesNoRetry() {
        Chain chain = walk(1, Optional.empty(), Duration.ofDays(4)).slowest();

        assertEquals(0, chain.lastScheduled());
        assertEquals(StopCondition.ATTEMPT_LIMIT, chain.stop());
    }

    @Test
    void pastTheRetentionSqsDeletesTheMessage() {
        Chain chain = walk(10, Optional.empty(), Duration.ofSeconds(150)).fastest();

        assertEquals(3, chain.lastAttempt());
        assertEquals(StopCondition.RETENTION, chain.stop());
    }

    @Test
    void aRetryPastBothWindowsIsStoppedByTheCutoffAndOnePastOnlyTheRetentionByTheRetention() {
        ChainWalk walk = walk(10, Optional.of(Duration.ofHours(2)), Duration.ofHours(1));

        assertEquals(StopCondition.CUTOFF, walk.walk(retry -> Duration.ofHours(3)).stop());
        assertEquals(StopCondition.RETENTION, walk.walk(retry -> Duration.ofMinutes(90)).stop());
    }
}

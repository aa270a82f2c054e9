package io.poisonguard.bench;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How often the bench counts the notices queue while it waits: rarely while far from the end, often near it. */
class DepthPacingTest {
    @Test
    void theFirstCountIsFollowedByTheShortestPauseForThereIsNoRateYet() {
        assertEquals(BenchIT.DepthPacing.MIN_PAUSE, BenchIT.DepthPacing.pause(10_000, Double.NaN));
    }

    @Test
    void theNextCountComesAfterHalfTheTimeTheRestShouldTake() {
        // 1000 left at 1000 a second: a second to go, counted again in half of it.
        assertEquals(Duration.ofMillis(500), BenchIT.DepthPacing.pause(1000, 1000));
    }

    @Test
    void farFromTheEndTheLongestPauseCapsTheWaitSoASlowStartIsNotMissed() {
        assertEquals(BenchIT.DepthPacing.MAX_PAUSE, BenchIT.DepthPacing.pause(30_000, 1000));
    }

    @Test
    void nearTheEndTheShortestPauseKeepsTheEndSeenPromptly() {
        assertEquals(BenchIT.DepthPacing.MIN_PAUSE, BenchIT.DepthPacing.pause(50, 1000));
    }

    @Test
    void aQueueThatDidNotFillSinceTheLastCountIsCountedAtTheLongestPause() {
        assertEquals(BenchIT.DepthPacing.MAX_PAUSE, BenchIT.DepthPacing.pause(500, 0));
    }
}

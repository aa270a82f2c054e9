package io.poisonguard.replay;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fleet's count allows, second by second, the whole numbers around the rate: never more in a second than the rate
 * rounded up, and the rate on average. A first version counted windows of up to 10 s, so 2.5/s let 5 go in one second and
 * 7.3/s let 73 go in two; rates with no whole window (0.05/s) fell back to one a second, twenty times the rate.
 */
class ReplayPacingTest {
    private static final long START = 1_796_000_000L;

    private static long[] limits(double rate, int seconds) {
        ReplayPacing pacing = new ReplayPacing(rate, ReplayQuota.NONE, Clock.systemUTC());
        return LongStream.range(START, START + seconds).map(pacing::limit).toArray();
    }

    @Test
    void everySecondAllowsAWholeNumberAroundTheRateAndTheSumIsTheRate() {
        for (double rate : new double[]{2.5, 7.3, 0.25, 0.3, 0.05, 1, 5, 1000}) {
            int seconds = 200;
            long[] limits = limits(rate, seconds);
            long most = LongStream.of(limits).max().orElseThrow();
            long sum = LongStream.of(limits).sum();
            assertTrue(most <= Math.ceil(rate), rate + "/s allowed " + most + " in one second");
            assertTrue(Math.abs(sum - rate * seconds) <= 1, rate + "/s allowed " + sum + " in " + seconds + " s");
        }
    }

    /**
     * Replays queued on one instance waited their turn of its own pace before the longest wait was counted: at 0.1/s four
     * queued replays waited 40 s, past the 60 s hold of their dead-letter copies for the fifth and later ones, while the README
     * promised 30 s at most. The longest wait covers the instance's own pace too: a replay whose turn comes after it is not
     * sent, and says so at once.
     */
    @Test
    void aReplayWhoseTurnOfThisInstancesPaceComesAfterTheLongestWaitIsNotSent() {
        ReplayPacing pacing = new ReplayPacing(1, ReplayQuota.NONE, Clock.systemUTC(), Duration.ofMillis(1500));
        java.util.List<java.util.concurrent.CompletableFuture<Boolean>> replays = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            java.util.concurrent.CompletableFuture<Boolean> sent = new java.util.concurrent.CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    sent.complete(pacing.acquire());
                } catch (InterruptedException e) {
                    sent.completeExceptionally(e);
                }
            });
            replays.add(sent);
        }
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(3)).until(() -> replays.stream().allMatch(java.util.concurrent.CompletableFuture::isDone));
        long went = replays.stream().filter(java.util.concurrent.CompletableFuture::join).count();
        assertEquals(2, went, "at 1/s within 1.5 s: the first at once and the next a second later; the other three are not sent");
    }

    /** A count that stays taken: the replay is not sent after the longest wait, rather than waiting for ever. */
    @Test
    void aCountThatStaysTakenGivesUpAfterTheLongestWait() throws InterruptedException {
        AtomicInteger asked = new AtomicInteger();
        // A clock that moves 10 s each time it is read: the 30 s wait passes in a few reads.
        AtomicInteger reads = new AtomicInteger();
        Clock fast = io.poisonguard.testing.Clocks.reading(() -> Instant.ofEpochSecond(START).plus(Duration.ofSeconds(10L * reads.getAndIncrement())));
        ReplayPacing pacing = new ReplayPacing(1000, (second, limit, forget) -> {
            asked.incrementAndGet();
            return false;
        }, fast);

        assertFalse(pacing.acquire());
        assertTrue(asked.get() >= 2, "asked " + asked.get() + " times");
    }

    @Test
    void aCountThatFailsLetsTheInstancePaceItselfAlone() throws InterruptedException {
        ReplayPacing pacing = new ReplayPacing(5, (second, limit, forget) -> {
            throw new IllegalStateException("AccessDenied");
        }, Clock.systemUTC());

        assertTrue(pacing.acquire());
        assertEquals(5, pacing.limit(START));
    }
}

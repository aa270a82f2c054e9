package io.poisonguard.ladder;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReachabilityProperties {
    private static final Duration LEASE = Duration.ofSeconds(60);

    @Provide
    Arbitrary<Ladder> ladders() {
        return Combinators.combine(
                Arbitraries.longs().between(0, 3_600).map(Duration::ofSeconds),
                Arbitraries.doubles().between(1.0, 4.0),
                Arbitraries.longs().between(0, 43_200).map(Duration::ofSeconds),
                Arbitraries.of(Jitter.class)).as(Ladder::new);
    }

    @Property(tries = 200)
    void theWorstCaseStartGrowsWithEveryExtraAttempt(
            @ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = 60) int maxAttempts,
            @ForAll @IntRange(min = 1, max = 43_200) int leaseSeconds) {
        Duration lease = Duration.ofSeconds(leaseSeconds);
        Duration now = Reachability.worstCaseStartOfLastAttempt(ladder, maxAttempts, lease);
        Duration next = Reachability.worstCaseStartOfLastAttempt(ladder, maxAttempts + 1, lease);

        assertTrue(next.compareTo(now) > 0, "attempt " + (maxAttempts + 1) + " starts no later than attempt " + maxAttempts);
        assertEquals(now.plus(lease).plus(ladder.ceiling(maxAttempts)), next);
    }

    @Property(tries = 200)
    void theBestCaseNeverComesAfterTheWorstCase(
            @ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = 60) int maxAttempts) {
        assertTrue(Reachability.bestCaseStartOfLastAttempt(ladder, maxAttempts)
                .compareTo(Reachability.worstCaseStartOfLastAttempt(ladder, maxAttempts, Duration.ZERO)) <= 0);
    }

    @Property(tries = 200)
    void aLimitIsReachableExactlyWhenItsWorstCaseStartsInsideTheWindow(
            @ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = 30) int maxAttempts,
            @ForAll @IntRange(min = 60, max = 14 * 86_400) int windowSeconds) {
        Duration window = Duration.ofSeconds(windowSeconds);
        Duration worst = Reachability.worstCaseStartOfLastAttempt(ladder, maxAttempts, LEASE);

        assertEquals(worst.compareTo(window) < 0, Reachability.unreachable(ladder, maxAttempts, LEASE, window, "w").isEmpty());
    }
}

package io.poisonguard.ladder;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.time.Duration;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LadderProperties {

    @Provide
    Arbitrary<Ladder> ladders() {
        Arbitrary<Duration> base = Arbitraries.longs().between(0, 100_000_000L).map(Duration::ofMillis);
        Arbitrary<Double> multiplier = Arbitraries.oneOf(
                Arbitraries.doubles().between(1.0, 10.0),
                Arbitraries.of(1.0, 2.0, 1_000.0));
        Arbitrary<Duration> cap = Arbitraries.longs().between(0, Ladder.SQS_MAX_VISIBILITY.toMillis()).map(Duration::ofMillis);
        Arbitrary<Jitter> jitter = Arbitraries.of(Jitter.class);
        return Combinators.combine(base, multiplier, cap, jitter).as(Ladder::new);
    }

    @Property(tries = 200)
    void everyDelayLiesBetweenTheFloorAndTheCeilingOfItsRetry(
            @ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = 200) int retry, @ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Duration floor = ladder.floor(retry);
        Duration ceiling = ladder.ceiling(retry);
        for (int i = 0; i < 20; i++) {
            Duration delay = ladder.delay(retry, random);
            assertTrue(delay.compareTo(floor) >= 0, delay + " is below the floor " + floor + " of " + ladder);
            assertTrue(delay.compareTo(ceiling) <= 0, delay + " is above the ceiling " + ceiling + " of " + ladder);
        }
    }

    @Property(tries = 200)
    void noJitterAlwaysWaitsTheCeilingAndEqualJitterAtLeastHalfOfIt(
            @ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = 200) int retry, @ForAll long seed) {
        Duration ceiling = ladder.ceiling(retry);
        Duration delay = ladder.delay(retry, new SplittableRandom(seed));
        switch (ladder.jitter()) {
            case NONE -> assertEquals(ceiling, delay);
            case EQUAL -> assertTrue(delay.toMillis() >= ceiling.toMillis() / 2, delay + " < half of " + ceiling);
            case FULL -> assertTrue(!delay.isNegative());
        }
    }

    @Property(tries = 200)
    void aCeilingNeverExceedsTheCapNorTheSqsVisibilityLimit(
            @ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = Integer.MAX_VALUE) int retry) {
        Duration ceiling = ladder.ceiling(retry);

        assertTrue(ceiling.compareTo(ladder.cap()) <= 0, ceiling + " exceeds the cap of " + ladder);
        assertTrue(ceiling.compareTo(Ladder.SQS_MAX_VISIBILITY) <= 0, ceiling + " exceeds 43200s");
        assertTrue(!ceiling.isNegative());
    }

    @Property(tries = 200)
    void ceilingsNeverDecreaseAsRetriesGoOn(@ForAll("ladders") Ladder ladder) {
        Duration previous = ladder.ceiling(1);
        for (int retry = 2; retry <= 120; retry++) {
            Duration next = ladder.ceiling(retry);
            assertTrue(next.compareTo(previous) >= 0, "retry " + retry + ": " + next + " < " + previous + " in " + ladder);
            previous = next;
        }
    }

    @Property(tries = 200)
    void theFloorNeverExceedsTheCeiling(@ForAll("ladders") Ladder ladder, @ForAll @IntRange(min = 1, max = 500) int retry) {
        assertTrue(ladder.floor(retry).compareTo(ladder.ceiling(retry)) <= 0);
    }
}

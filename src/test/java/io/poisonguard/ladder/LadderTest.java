package io.poisonguard.ladder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LadderTest {

    @Test
    void ceilingsGrowByTheMultiplierFromTheBase() {
        Ladder ladder = new Ladder(Duration.ofSeconds(10), 3, Duration.ofHours(1), Jitter.NONE);

        assertEquals(Duration.ofSeconds(10), ladder.ceiling(1));
        assertEquals(Duration.ofSeconds(30), ladder.ceiling(2));
        assertEquals(Duration.ofSeconds(90), ladder.ceiling(3));
        assertEquals(Duration.ofSeconds(270), ladder.ceiling(4));
    }

    @Test
    void ceilingStopsAtTheCap() {
        Ladder ladder = new Ladder(Duration.ofSeconds(10), 2, Duration.ofSeconds(45), Jitter.NONE);

        assertEquals(Duration.ofSeconds(40), ladder.ceiling(3));
        assertEquals(Duration.ofSeconds(45), ladder.ceiling(4));
        assertEquals(Duration.ofSeconds(45), ladder.ceiling(1_000));
    }

    @Test
    void ceilingOfAHugeRetryIsTheCapNotAnOverflow() {
        Ladder ladder = new Ladder(Duration.ofHours(1), 10, Ladder.SQS_MAX_VISIBILITY, Jitter.NONE);

        assertEquals(Ladder.SQS_MAX_VISIBILITY, ladder.ceiling(Integer.MAX_VALUE));
    }

    @Test
    void noJitterWaitsExactlyTheCeiling() {
        Ladder ladder = new Ladder(Duration.ofSeconds(300), 2, Duration.ofHours(12), Jitter.NONE);

        assertEquals(Duration.ofSeconds(1_200), ladder.delay(3, new Random(1)));
        assertEquals(ladder.ceiling(3), ladder.floor(3));
    }

    @Test
    void equalJitterWaitsAtLeastHalfTheCeiling() {
        Ladder ladder = new Ladder(Duration.ofSeconds(100), 1, Duration.ofSeconds(100), Jitter.EQUAL);

        assertEquals(Duration.ofSeconds(50), ladder.floor(1));
        Random random = new Random(7);
        for (int i = 0; i < 500; i++) {
            Duration d = ladder.delay(1, random);
            assertTrue(d.compareTo(Duration.ofSeconds(50)) >= 0 && d.compareTo(Duration.ofSeconds(100)) <= 0, d.toString());
        }
    }

    @Test
    void fullJitterSpreadsDelaysAcrossTheWholeRangeFromZero() {
        Ladder ladder = new Ladder(Duration.ofSeconds(100), 1, Duration.ofSeconds(100), Jitter.FULL);
        Random random = new Random(42);
        Set<Duration> seen = new HashSet<>();
        long below = 0;
        for (int i = 0; i < 500; i++) {
            Duration d = ladder.delay(1, random);
            seen.add(d);
            if (d.compareTo(Duration.ofSeconds(50)) < 0) {
                below++;
            }
        }

        assertEquals(Duration.ZERO, ladder.floor(1));
        assertTrue(seen.size() > 400, "full jitter must not synchronise retries, saw " + seen.size() + " distinct delays");
        assertTrue(below > 150 && below < 350, "about half the draws fall below half the ceiling, saw " + below);
    }

    @Test
    void aZeroBaseNeverWaits() {
        for (Jitter jitter : Jitter.values()) {
            Ladder ladder = new Ladder(Duration.ZERO, 2, Duration.ofMinutes(5), jitter);
            assertEquals(Duration.ZERO, ladder.delay(5, new Random(3)), jitter.name());
        }
    }

    @Test
    void capOfExactlyTheSqsVisibilityLimitIsAccepted() {
        Ladder ladder = new Ladder(Duration.ofSeconds(1), 2, Duration.ofSeconds(43_200), Jitter.FULL);

        assertEquals(Duration.ofSeconds(43_200), ladder.ceiling(100));
    }

    @Test
    void constructorRejectsACapAboveTheSqsVisibilityLimit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Ladder(Duration.ofSeconds(1), 2, Duration.ofSeconds(43_201), Jitter.FULL));
        assertTrue(e.getMessage().startsWith("cap"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.99, 0.0, -2.0, Double.NaN, Double.POSITIVE_INFINITY})
    void constructorRejectsAMultiplierBelowOneOrNotFinite(double multiplier) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Ladder(Duration.ofSeconds(1), multiplier, Duration.ofMinutes(1), Jitter.FULL));
        assertTrue(e.getMessage().startsWith("multiplier"), e.getMessage());
    }

    @Test
    void constructorRejectsANegativeBase() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Ladder(Duration.ofSeconds(-1), 2, Duration.ofMinutes(1), Jitter.FULL));
        assertTrue(e.getMessage().startsWith("base"), e.getMessage());
    }

    @Test
    void constructorRejectsANegativeCapAndAMissingJitter() {
        assertThrows(IllegalArgumentException.class, () -> new Ladder(Duration.ofSeconds(1), 2, Duration.ofSeconds(-1), Jitter.FULL));
        assertThrows(IllegalArgumentException.class, () -> new Ladder(Duration.ofSeconds(1), 2, Duration.ofMinutes(1), null));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1})
    void retriesAreOneBased(int retry) {
        Ladder ladder = new Ladder(Duration.ofSeconds(1), 2, Duration.ofMinutes(1), Jitter.FULL);

        assertThrows(IllegalArgumentException.class, () -> ladder.ceiling(retry));
        assertThrows(IllegalArgumentException.class, () -> ladder.delay(retry, new Random(1)));
    }
}

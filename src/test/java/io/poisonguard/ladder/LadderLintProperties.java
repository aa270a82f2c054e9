package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.time.Duration;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LadderLintProperties {

    @Provide
    Arbitrary<ClassPolicy> policies() {
        Arbitrary<Ladder> ladders = Combinators.combine(
                Arbitraries.longs().between(0, 3_600).map(Duration::ofSeconds),
                Arbitraries.doubles().between(1.0, 4.0),
                Arbitraries.longs().between(0, 43_200).map(Duration::ofSeconds),
                Arbitraries.of(Jitter.class)).as(Ladder::new);
        Arbitrary<Optional<Duration>> cutoffs = Arbitraries.longs().between(60, 4 * 86_400).map(Duration::ofSeconds)
                .optional(0.7);
        return Combinators.combine(Arbitraries.integers().between(1, 40), ladders, cutoffs).as(ClassPolicy::new);
    }

    @Property(tries = 200)
    void everyDrawnChainLiesBetweenTheFastestAndTheSlowestClimb(
            @ForAll("policies") ClassPolicy policy, @ForAll @IntRange(min = 60, max = 14 * 86_400) int retentionSeconds,
            @ForAll @IntRange(min = 0, max = 600) int attemptSeconds, @ForAll long seed) {
        ChainWalk walk = new ChainWalk(policy, Duration.ofSeconds(retentionSeconds), Duration.ofSeconds(attemptSeconds));
        Chain fastest = walk.fastest();
        Chain slowest = walk.slowest();
        Random random = new Random(seed);
        for (int i = 0; i < 50; i++) {
            Chain drawn = walk.drawn(random);
            assertTrue(drawn.lastAttempt() <= fastest.lastAttempt(), "no chain outruns the zero-jitter climb");
            assertTrue(drawn.lastAttempt() >= slowest.lastAttempt(), "no chain falls behind the ceiling climb");
            for (int attempt = 1; attempt <= drawn.lastAttempt(); attempt++) {
                assertTrue(drawn.start(attempt).compareTo(fastest.start(attempt)) >= 0);
            }
        }
    }

    @Property(tries = 200)
    void aDeadLimitIsReachedByNoSimulatedChainAndAnAlwaysReachedOneByAll(
            @ForAll("policies") ClassPolicy policy, @ForAll @IntRange(min = 60, max = 14 * 86_400) int retentionSeconds,
            @ForAll long seed) {
        LadderReport report = LadderLint.report(FailureClass.THROTTLED, policy, Duration.ofSeconds(retentionSeconds), Duration.ZERO,
                200, seed);
        int reached = report.simulated().reachedLimit();

        switch (report.reach()) {
            case NEVER -> assertEquals(0, reached);
            case ALWAYS -> assertEquals(200, reached);
            case SOMETIMES -> assertTrue(report.fastest().lastAttempt() >= policy.maxAttempts());
        }
        Duration window = policy.cutoff().filter(c -> c.getSeconds() < retentionSeconds).orElse(Duration.ofSeconds(retentionSeconds));
        assertEquals(report.reach() == Reach.NEVER, report.earliestStartOfLimit().compareTo(window) > 0, report.verdict());
    }
}

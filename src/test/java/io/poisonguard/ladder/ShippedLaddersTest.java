package io.poisonguard.ladder;

import io.poisonguard.config.ClassPolicies;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.StandaloneConfig;
import io.poisonguard.failure.FailureClass;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ladders application.properties ships with: every attempt limit is the one that stops a chain. */
class ShippedLaddersTest {

    private static List<LadderReport> lint(Duration attemptTime) {
        PoisonGuardConfig config = StandaloneConfig.load(Map.of());
        return LadderLint.lint(ClassPolicies.of(config.failure()), config.resources().queueRetention(), attemptTime, 20_000, 7);
    }

    @Test
    void everyShippedAttemptLimitIsAlwaysReached() {
        List<LadderReport> reports = lint(Duration.ZERO);

        assertEquals(FailureClass.values().length, reports.size());
        for (LadderReport report : reports) {
            assertEquals(Reach.ALWAYS, report.reach(), report.failureClass() + ": " + report.verdict());
            assertEquals(Map.of(StopCondition.ATTEMPT_LIMIT, 20_000), report.simulated().stops(), report.failureClass().key());
        }
    }

    @Test
    void theyStayReachableWhenEveryAttemptRunsItsWholeLease() {
        Duration lease = StandaloneConfig.load(Map.of()).consumer().visibilityTimeout();

        assertTrue(lint(lease).stream().noneMatch(LadderReport::dead));
    }
}

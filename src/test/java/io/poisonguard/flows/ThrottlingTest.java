package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.example.permit.SimulatedRecordsProvider;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Seed 002's quota: a burst above the provider's rate queues up in front of it instead of becoming 429s. */
@QuarkusTest
@TestProfile(ThrottlingTest.Profile.class)
class ThrottlingTest extends FlowTest {
    static final int RATE = 5;
    static final int JOBS = 40;

    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.example.provider.rate", Integer.toString(RATE));
        }
    }

    @Inject
    SimulatedRecordsProvider provider;

    @Test
    void aBurstAboveTheRateNeverReachesTheProviderFasterThanTheRateAndAllComplete() {
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, JOBS).mapToObj(i -> "burst-" + i).toList();
        Instant start = Instant.now();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-a", 3)));

        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream().allMatch(id ->
                ledger.find(key(id)).map(LedgerRecord::state).orElse(null) == JobState.SUCCEEDED));
        Duration took = Duration.between(start, Instant.now());

        assertEquals(JOBS, provider.totalCalls(), "one call per job: nothing was retried");
        assertTrue(provider.maxCallsInAnySecond() <= RATE, "the provider saw " + provider.maxCallsInAnySecond() + " calls in one second");
        assertTrue(jobs.stream().noneMatch(id -> quarantine.find(key(id)).isPresent()));
        System.out.printf("%n[throttling] %d jobs sent at once, provider quota %d/s: at most %d calls in any second,"
                + " all completed in %d ms, none retried or quarantined%n", JOBS, RATE, provider.maxCallsInAnySecond(), took.toMillis());
    }
}

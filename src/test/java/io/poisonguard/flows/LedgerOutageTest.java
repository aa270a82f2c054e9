package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.pipeline.LedgerGate;
import io.poisonguard.testing.Emulators;
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

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 10: DynamoDB stops answering under load for longer than three visibility timeouts. The
 * ledger-health gate pauses consumption; nothing is charged to the jobs, nothing is quarantined or
 * redriven, and everything completes once the ledger answers again.
 */
@QuarkusTest
@TestProfile(LedgerOutageTest.Profile.class)
class LedgerOutageTest extends FlowTest {
    static final int JOBS = 60;
    static final Duration FREEZE = Duration.ofSeconds(18);

    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // Low limits, so that any failure charged for the outage would show as a quarantine.
            // The provider takes 5 calls a second, so most of the 60 jobs are still to run when the ledger freezes
            // (at 15 a second a slow poll could see them all done first, and then nothing touches the frozen ledger).
            return Map.of("poison-guard.example.provider.latency", "100ms", "poison-guard.example.provider.rate", "5",
                    "poison-guard.failure.transient.max-attempts", "2",
                    "poison-guard.failure.crash.max-attempts", "2",
                    "poison-guard.failure.crash-ambiguous.max-attempts", "2",
                    "poison-guard.failure.timeout.max-attempts", "2");
        }
    }

    @Inject
    LedgerGate gate;
    @Inject
    io.poisonguard.config.PoisonGuardConfig config;

    @Test
    void aFrozenLedgerPausesConsumptionChargesNothingAndEverythingCompletesAfterwards() {
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, JOBS).mapToObj(i -> "outage-" + i).toList();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-o", 3)));
        await().atMost(Duration.ofSeconds(30)).until(() -> jobs.stream().filter(id -> state(id) == JobState.SUCCEEDED).count() >= 5);

        Emulators emulators = Emulators.shared();
        Instant frozenAt = Instant.now();
        emulators.freezeDynamo();
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> gate.downSince().isPresent());
            management().get("/q/health/ready").then().statusCode(503);
            // Consumption stays paused for the rest of the outage: nothing cycles toward the redrive backstop.
            Duration left = FREEZE.minus(Duration.between(frozenAt, Instant.now()));
            if (!left.isNegative()) {
                await().during(left).atMost(left.plusSeconds(5)).until(() -> gate.downSince().isPresent());
            }
        } finally {
            emulators.thawDynamo();
        }

        await().atMost(Duration.ofSeconds(90)).until(() -> jobs.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
        await().atMost(Duration.ofSeconds(10)).until(() -> gate.downSince().isEmpty());
        assertEquals(0, queues.depth(names.deadLetterQueue()), "nothing was redriven or quarantined into the DLQ");
        int released = 0;
        for (String id : jobs) {
            LedgerRecord r = ledger.find(key(id)).orElseThrow();
            assertTrue(r.failures().isEmpty(), id + " was charged for the outage: " + r.failures() + " " + r.history());
            assertTrue(quarantine.find(key(id)).isEmpty(), id + " was quarantined");
            released += (int) r.history().stream().filter(e -> e.outcome() == AttemptOutcome.ABANDONED).count();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0);
        System.out.printf("%n[ledger outage] DynamoDB frozen %d s (visibility 5 s) under %d jobs: 0 charged, 0 quarantined,"
                + " 0 redriven, %d attempts given back uncounted, all completed%n", FREEZE.toSeconds(), JOBS, released);
    }

    /**
     * The client the service runs with, not just its configuration: every message the worker may have unfinished can
     * make a ledger call at once, and a call that finds the pool empty waits for a connection (the SDK's default of
     * 50 made writes queue at concurrency 8).
     */
    @Test
    void theLedgerClientHasAConnectionForEveryMessageTheWorkerMayHaveUnfinished() {
        int bound = io.poisonguard.pipeline.LedgerConnections.forWorker(config.consumer().concurrency(), config.consumer().prefetch());
        assertTrue(bound >= 2 * (config.consumer().concurrency() + 40), "the bound covers held and settling messages: " + bound);
        assertEquals(java.util.OptionalInt.of(bound), io.poisonguard.testing.ConnectionPools.maxTotal(dynamo));
    }
}

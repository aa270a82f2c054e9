package io.poisonguard.flows;

import io.poisonguard.example.permit.SimulatedRecordsProvider;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobState;
import io.poisonguard.pipeline.ConsumptionGate;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dependency-down is not poison: while permit-records is down the breaker opens and consumption
 * pauses, so items pay only for the probes; when it comes back everything completes.
 */
@QuarkusTest
@TestProfile(DependencyDownTest.Profile.class)
class DependencyDownTest extends FlowTest {
    static final int JOBS = 30;

    public static class Profile extends EmulatorProfile {
        @Override
        public java.util.Map<String, String> getConfigOverrides() {
            return java.util.Map.of("poison-guard.example.provider.latency", "20ms");
        }
    }

    @Inject
    SimulatedRecordsProvider provider;
    @Inject
    ConsumptionGate gate;

    @Test
    void aDownProviderPausesConsumptionQuarantinesNothingAndEverythingCompletesWhenItReturns() {
        provider.down(true);
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, JOBS).mapToObj(i -> "down-" + i).toList();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-a", 3)));

        await().atMost(Duration.ofSeconds(30)).until(() -> gate.admit() == ConsumptionGate.Admit.PAUSED);
        given().get("/q/health/ready").then().statusCode(200)
                .body("checks.data.'breaker.permit-records'", hasItem("OPEN"));
        String metrics = given().get("/q/metrics").then().extract().asString();
        assertTrue(metrics.contains("poison_guard_consumption_paused 1.0"), "paused is visible in metrics");

        int callsAtTrip = provider.totalCalls();
        // Several open/half-open cycles (2 s each) pass: only probes reach the provider, nothing is quarantined.
        await().during(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(8)).until(() ->
                jobs.stream().noneMatch(id -> quarantine.find(id).isPresent()));
        int probes = provider.totalCalls() - callsAtTrip;
        assertTrue(probes <= 5, "only half-open probes reached the provider during the outage, was " + probes);

        provider.down(false);
        await().atMost(Duration.ofSeconds(90)).until(() -> jobs.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
        int attempts = jobs.stream().mapToInt(id -> ledger.find(id).orElseThrow().attempt()).sum();
        int downFailures = jobs.stream().mapToInt(id -> ledger.find(id).orElseThrow().failuresOf(FailureClass.DEPENDENCY_DOWN)).sum();
        assertTrue(jobs.stream().noneMatch(id -> quarantine.find(id).isPresent()), "no job was quarantined");
        // Each job ran once to succeed; every extra attempt is a call before the trip, a probe, or a job in flight at the trip.
        int extra = attempts - JOBS;
        assertTrue(extra <= callsAtTrip + probes + 8, "extra attempts " + extra + " exceed calls before trip " + callsAtTrip
                + " + probes " + probes + " + concurrency 8");
        assertEquals(extra, downFailures, "every extra attempt is a DEPENDENCY_DOWN failure");
        System.out.printf("%n[dependency down] %d jobs: %d provider calls before the breaker opened, %d probes during the outage,"
                + " %d attempts in all (%d extra), 0 quarantined%n", JOBS, callsAtTrip, probes, attempts, extra);
    }

}

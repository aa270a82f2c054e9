package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.example.permit.PermitRecordsClient;
import io.poisonguard.example.permit.SimulatedRecordsProvider;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
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
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
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
    /** poison-guard.consumer.concurrency's default: the most jobs already received when consumption paused. */
    static final int CONCURRENCY = 8;

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

        // The breaker's own state, not the gate's verdict: the window below must start even if the gate never pauses.
        await().atMost(Duration.ofSeconds(30)).until(() -> "OPEN".equals(gate.states().get(PermitRecordsClient.BREAKER)));

        int callsAtTrip = provider.totalCalls();
        int attemptsAtTrip = attempts(jobs);
        // Several open/half-open cycles (2 s each) pass. With consumption paused only the half-open
        // probes start attempts (plus jobs already received when the breaker opened); a poller that
        // kept receiving would start one for every copy it took, each DEPENDENCY_DOWN retry being 1-3 s away.
        await("attempts started during the outage beyond the probes that reached the provider (consumption must pause)")
                .pollInterval(Duration.ofMillis(500)).during(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(20))
                .until(() -> (attempts(jobs) - attemptsAtTrip) - (provider.totalCalls() - callsAtTrip), lessThanOrEqualTo(CONCURRENCY));
        // Between probes the breaker is open (half-open until the next probe) and consumption is paused; both are visible.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            management().get("/q/health/ready").then().statusCode(200)
                    .body("checks.data.'breaker.permit-records'", hasItem(anyOf(equalTo("OPEN"), equalTo("HALF_OPEN"))));
            assertEquals(ConsumptionGate.Admit.PAUSED, gate.admit());
            assertTrue(management().get("/q/metrics").then().extract().asString().contains("poison_guard_consumption_paused 1.0"),
                    "paused is visible in metrics");
        });
        int probes = provider.totalCalls() - callsAtTrip;

        provider.down(false);
        await().atMost(Duration.ofSeconds(90)).until(() -> jobs.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
        int attempts = attempts(jobs);
        int downFailures = jobs.stream().mapToInt(id -> ledger.find(key(id)).orElseThrow().failuresOf(FailureClass.DEPENDENCY_DOWN)).sum();
        assertTrue(jobs.stream().noneMatch(id -> quarantine.find(key(id)).isPresent()), "no job was quarantined");
        // Each job ran once to succeed; every extra attempt is a call before the trip, a probe, or a job in flight at the
        // trip: one of the handlers running then, or one of the messages held then (taking its intake or prefetched:
        // the concurrency and the reserve, which follows the jobs' times and is at most 20 at concurrency 8), given back
        // once its turn came with consumption paused.
        int extra = attempts - JOBS;
        int heldAtTrip = CONCURRENCY + 20;
        assertTrue(extra <= callsAtTrip + probes + CONCURRENCY + heldAtTrip, "extra attempts " + extra + " exceed calls before trip "
                + callsAtTrip + " + probes " + probes + " + concurrency " + CONCURRENCY + " + messages held " + heldAtTrip);
        int held = outcomes(jobs, AttemptOutcome.HELD);
        // A job whose attempt was written but whose turn came with consumption paused is given back without running.
        int givenBack = outcomes(jobs, AttemptOutcome.ABANDONED);
        assertTrue(givenBack <= heldAtTrip, givenBack + " attempts given back unstarted, more than the messages held at the trip " + heldAtTrip);
        assertEquals(extra, downFailures + held + givenBack,
                "every extra attempt is a DEPENDENCY_DOWN failure (charged or held) or was given back before it started");
        // Only the calls that opened the breaker are charged; once it stops the work, the jobs pay nothing.
        assertTrue(downFailures <= callsAtTrip, "charged " + downFailures + " DEPENDENCY_DOWN failures, more than the "
                + callsAtTrip + " calls made before the breaker opened");
        System.out.printf("%n[dependency down] %d jobs: %d provider calls before the breaker opened, %d probes during the outage,"
                + " %d attempts in all (%d extra, %d of them given back before they started), 0 quarantined%n", JOBS, callsAtTrip, probes,
                attempts, extra, givenBack);
    }

    /** Attempts across {@code jobs} that ended with {@code outcome}. */
    private int outcomes(List<String> jobs, AttemptOutcome outcome) {
        return jobs.stream().mapToInt(id -> (int) ledger.find(key(id)).orElseThrow().history().stream()
                .filter(e -> e.outcome() == outcome).count()).sum();
    }

    /** Attempts the ledger has recorded across {@code jobs} (a job not yet seen has none). */
    private int attempts(List<String> jobs) {
        return jobs.stream().mapToInt(id -> ledger.find(key(id)).map(LedgerRecord::attempt).orElse(0)).sum();
    }
}

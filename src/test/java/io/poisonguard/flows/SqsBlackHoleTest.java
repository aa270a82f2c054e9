package io.poisonguard.flows;

import io.poisonguard.ledger.JobState;
import io.poisonguard.testing.BlackHoleProxy;
import io.poisonguard.testing.BlackHoleSqsResource;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * SQS stops answering: every request on the wire is swallowed, as by a wedged load balancer, and the requests
 * lost meanwhile are never answered, even after the path is restored. Every SQS call the worker makes is bounded
 * (a long poll by its wait plus a margin), so the worker gives up on the lost receive, takes a fresh connection
 * and consumes again within that bound of the restore, losing nothing. A worker that waited on its sockets alone
 * would sit out the read timeout (30 s by default), or for ever without one.
 */
@QuarkusTest
@TestProfile(SqsBlackHoleTest.Profile.class)
class SqsBlackHoleTest extends FlowTest {
    /**
     * The receive's bound under test (a 1 s long poll plus the client's 3 s attempt timeout, which this profile sets
     * in place of the default 10 s), the 1 s pause after a failed receive, and room for a busy machine. A margin
     * that did not follow the configured attempt timeout (a fixed 10 s) would come back after 11 s and fail.
     */
    static final Duration RECOVERY = Duration.ofSeconds(9);

    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(BlackHoleSqsResource.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> overrides = new java.util.HashMap<>(super.getConfigOverrides());
            overrides.put("quarkus.sqs.api-call-attempt-timeout", "3s");
            return overrides;
        }
    }

    @Test
    void aReceiveLostInABlackHoleIsGivenUpWithinItsBoundAndConsumptionResumes() {
        BlackHoleProxy proxy = BlackHoleSqsResource.proxy();
        try (SqsClient direct = EmulatorClients.sqs(BlackHoleSqsResource.direct())) {
            Queues queues = new Queues(direct, names);
            List<String> before = IntStream.range(0, 5).mapToObj(i -> "hole-before-" + i).toList();
            before.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-h", 3)));
            await().atMost(Duration.ofSeconds(30)).until(() -> before.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));

            proxy.swallow();
            List<String> during = IntStream.range(0, 10).mapToObj(i -> "hole-during-" + i).toList();
            during.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-h", 3)));
            // The worker's next receive goes into the hole and is never answered.
            await().atMost(Duration.ofSeconds(15)).until(() -> proxy.connectionsWithALostRequest() > 0);
            proxy.restore();
            Instant restored = Instant.now();

            await().atMost(RECOVERY).pollInterval(Duration.ofMillis(200))
                    .until(() -> during.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
            System.out.printf("SqsBlackHoleTest: consuming again %d ms after the restore; %d connections kept a lost request%n",
                    Duration.between(restored, Instant.now()).toMillis(), proxy.connectionsWithALostRequest());
            // Nothing the hole swallowed was lost: every job ran exactly once and nothing was quarantined.
            for (String id : during) {
                assertEquals(1, ledger.find(key(id)).orElseThrow().attempt(), id + " ran once");
            }
        }
    }
}

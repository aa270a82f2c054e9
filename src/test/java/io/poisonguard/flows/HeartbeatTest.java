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

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A handler that runs longer than the visibility timeout keeps its job: the heartbeat extends the
 * message's visibility and the ledger lease, so the job is neither redelivered nor run twice.
 */
@QuarkusTest
@TestProfile(HeartbeatTest.Profile.class)
class HeartbeatTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
    }

    @Inject
    SimulatedRecordsProvider provider;

    @Test
    void aHandlerRunningThreeTimesTheVisibilityTimeoutRunsOnceAndItsLeaseIsExtended() {
        provider.script("P-SLOW", "hang:15s");
        new Queues(sqs, names).send(Queues.permitV3("P-SLOW"), Queues.permitAttributes("slow-1", "tenant-a", 3));

        await().atMost(Duration.ofSeconds(10)).until(() -> ledger.find(key("slow-1")).map(r -> r.state() == JobState.ACTIVE).orElse(false));
        Instant firstLease = ledger.find(key("slow-1")).orElseThrow().leaseUntil();
        await().atMost(Duration.ofSeconds(10)).until(() -> ledger.find(key("slow-1")).orElseThrow().leaseUntil().isAfter(firstLease));

        await().atMost(Duration.ofSeconds(40)).until(() -> ledger.find(key("slow-1")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false));
        LedgerRecord r = ledger.find(key("slow-1")).orElseThrow();
        assertEquals(1, r.attempt(), "no second attempt while the first was alive");
        assertEquals(1, provider.calls("P-SLOW"), "the handler ran once");
        Duration ran = Duration.between(r.history().get(0).startedAt(), r.history().get(0).endedAt());
        assertTrue(ran.compareTo(Duration.ofSeconds(15)) >= 0, "ran " + ran + ", three times the 5 s visibility timeout");
    }
}

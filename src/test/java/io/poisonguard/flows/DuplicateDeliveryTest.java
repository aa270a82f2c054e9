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
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Invariant 4: two copies of one job id delivered at once run the handler once. */
@QuarkusTest
@TestProfile(DuplicateDeliveryTest.Profile.class)
class DuplicateDeliveryTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // Slow enough that both copies are in flight together.
            return Map.of("poison-guard.example.provider.latency", "1500ms");
        }
    }

    @Inject
    SimulatedRecordsProvider provider;

    @Test
    void twoCopiesOfOneJobSentTogetherRunTheHandlerOnceAndBothLeaveTheQueue() {
        Queues queues = new Queues(sqs, names);
        String body = Queues.permitV3("P-DUP");
        var attrs = Queues.sdk(Queues.permitAttributes("dup-1", "tenant-a", 3));
        sqs.sendMessageBatch(b -> b.queueUrl(queues.url(names.jobsQueue())).entries(
                SendMessageBatchRequestEntry.builder().id("a").messageBody(body).messageAttributes(attrs).build(),
                SendMessageBatchRequestEntry.builder().id("b").messageBody(body).messageAttributes(attrs).build()));

        await().atMost(Duration.ofSeconds(60)).until(() ->
                ledger.find(key("dup-1")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false) && queues.depth(names.jobsQueue()) == 0);

        LedgerRecord r = ledger.find(key("dup-1")).orElseThrow();
        assertEquals(1, r.attempt(), "one attempt for two copies");
        assertEquals(1, provider.calls("P-DUP"), "the handler reached the provider once");
        List<Message> notices = queues.drain(names.noticesQueue());
        assertEquals(1, notices.size(), "one completion notice");
    }

    @Test
    void aCopyOfAnOlderGenerationIsDroppedWithoutRunning() {
        // The job was replayed: its ledger is at generation 2 and its replayed copy is on its way.
        java.time.Instant now = java.time.Instant.now();
        LedgerRecord replaying = ledger.write(LedgerRecord.fresh("stale-1", "tenant-a", "permit-report", 2, now)
                .moveTo(JobState.RETRY_WAIT, now));
        Queues queues = new Queues(sqs, names);
        // A copy of generation 1 (no generation attribute) turns up late, e.g. moved back from the DLQ.
        queues.send(Queues.permitV3("P-STALE"), Queues.permitAttributes("stale-1", "tenant-a", 3));

        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0);
        assertEquals(0, provider.calls("P-STALE"), "the older generation never ran");
        LedgerRecord after = ledger.find(key("stale-1")).orElseThrow();
        assertEquals(replaying.version(), after.version(), "the ledger was not touched");
        assertEquals(2, after.generation());
        assertEquals(0, queues.drain(names.noticesQueue()).stream().filter(m -> "stale-1".equals(Queues.attr(m, "job-id"))).count());
    }
}

package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.example.permit.SimulatedRecordsProvider;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ScriptedHandler;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;

import java.time.Duration;
import java.util.List;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Seed 001's "restore a temporary dependency": a transient failure that clears completes without quarantine. */
@QuarkusTest
@TestProfile(TransientRecoveryTest.Profile.class)
class TransientRecoveryTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
    }

    @Inject
    SimulatedRecordsProvider provider;

    @Test
    void aProviderThatFailsTwiceThenWorksCompletesOnTheThirdAttemptWithItsDelaysRecorded() {
        provider.script("P-FLAKY", "fail:2");
        Queues queues = new Queues(sqs, names);
        queues.send(Queues.permitV3("P-FLAKY"), Queues.permitAttributes("flaky-1", "tenant-a", 3));

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger.find(key("flaky-1")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false));

        LedgerRecord r = ledger.find(key("flaky-1")).orElseThrow();
        assertEquals(3, r.attempt());
        assertEquals(2, r.failuresOf(FailureClass.TRANSIENT));
        List<AttemptEntry> h = r.history();
        assertEquals(3, h.size());
        for (AttemptEntry failed : h.subList(0, 2)) {
            assertEquals(AttemptOutcome.FAILED, failed.outcome());
            assertEquals(FailureClass.TRANSIENT, failed.failureClass());
            assertNotNull(failed.retryDelay(), "the ladder delay is recorded");
            assertTrue(failed.retryDelay().compareTo(Duration.ofSeconds(2)) <= 0, "within the test ladder's cap");
            assertTrue(failed.message().contains("503"), failed.message());
        }
        assertEquals(AttemptOutcome.SUCCEEDED, h.get(2).outcome());
        assertTrue(quarantine.find(key("flaky-1")).isEmpty(), "never quarantined");
        assertEquals(3, provider.calls("P-FLAKY"));

        List<Message> notices = queues.drain(names.noticesQueue());
        assertEquals(1, notices.size());
        assertEquals("flaky-1", Queues.attr(notices.get(0), "job-id"));
        System.out.printf("%n[transient] flaky-1 completed on attempt %d after delays %s and %s%n",
                r.attempt(), h.get(0).retryDelay(), h.get(1).retryDelay());
    }

    @Inject
    ScriptedHandler scripted;

    @Test
    void anEffectDeferredToTheHandlersSuccessThatFailsFailsTheAttemptAndIsPerformedAndRecordedByTheRetry() {
        // The handler returns normally both times; its deferred effect throws a transient failure the first time.
        new Queues(sqs, names).send("deferred-fails-once", ScriptedHandler.attributes("deferred-1"));

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger.find(key("deferred-1")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false));

        LedgerRecord r = ledger.find(key("deferred-1")).orElseThrow();
        assertEquals(2, r.attempt());
        assertEquals(1, r.failuresOf(FailureClass.TRANSIENT), "the effect's failure was the attempt's");
        assertEquals(AttemptOutcome.FAILED, r.history().get(0).outcome());
        assertTrue(r.history().get(0).message().contains("did not answer"), r.history().get(0).message());
        assertEquals(java.util.Map.of(ScriptedHandler.DEFERRED_EFFECT, 2), r.effects(), "recorded by the attempt that performed it");
        assertEquals(2, scripted.calls("deferred-1"));
        assertEquals(2, scripted.deferredRuns("deferred-1"));
    }
}

package io.poisonguard.flows;

import io.poisonguard.ledger.JobState;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.AlertSinks;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deployment with the payload vault switched off: when the dead-letter queue refuses a copy for good,
 * the record and alert still come, and the source message stays on the main queue for SQS's redrive
 * policy, since nothing else holds the payload.
 */
@QuarkusTest
@TestProfile(DeadLetterRefusedWithoutVaultTest.Profile.class)
class DeadLetterRefusedWithoutVaultTest extends FlowTest {
    @jakarta.inject.Inject
    io.poisonguard.replay.PayloadArchive archive;

    public static class Profile extends DeadLetterRefusedTest.Profile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> c = new HashMap<>(super.getConfigOverrides());
            c.put("poison-guard.payload-vault.enabled", "false");
            c.put("poison-guard.dead-letter.sweep-interval", "1s");
            c.put("poison-guard.replay.settle-time", "1s");
            return c;
        }
    }

    @Test
    void withoutTheVaultARefusedCopyKeepsItsSourceMessageForTheRedrivePolicy() {
        Queues queues = queues();
        queues.send(Queues.permitV3("P-R2"), Queues.permitAttributes("refused-2", "tenant-r", 99));

        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("refused-2")).isPresent()
                && AlertSinks.WEBHOOK.stream().anyMatch(a -> a.contains("\"refused-2\"")));

        QuarantineRecord q = quarantine.find(key("refused-2")).orElseThrow();
        assertEquals(DeadLetterCopy.State.REFUSED, q.deadLetter().state());
        assertTrue(q.deadLetter().sourceKept(), "no other copy of the payload: the source message stays");
        assertEquals(0, queues.depth(names.deadLetterQueue()));
        assertEquals(1, queues.depth(names.jobsQueue()), "the source message is kept for the redrive policy");
        assertEquals(1, AlertSinks.WEBHOOK.stream().filter(a -> a.contains("\"refused-2\"")).count(), "one alert");

        // A replay meanwhile finds no payload: no vault, nothing in the DLQ. The job's only copy is the source message kept
        // on the main queue, so the replay is refused until the redrive policy has moved it; before, the job was called
        // UNRECOVERABLE (410, "no dead-letter copy is left") and its copy, once in the DLQ, could never be replayed.
        registerTenant("tenant-r", "ACTIVE", "permit-report");
        java.time.Instant settled = q.quarantinedAt().plusSeconds(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> java.time.Instant.now().isAfter(settled));
        io.restassured.RestAssured.given().auth().oauth2(io.poisonguard.testing.Tokens.of("olga", "operator"))
                .contentType(io.restassured.http.ContentType.JSON).body(Map.of("reason", "reader shipped", "dryRun", false))
                .post("/ops/quarantine/refused-2/replay").then().statusCode(409)
                .body("detail", org.hamcrest.Matchers.containsString("main queue"));
        assertEquals(JobState.QUARANTINED, state("refused-2"), "the job is still replayable once its copy reaches the DLQ");
        assertEquals(1, queues.depth(names.jobsQueue()), "and its copy is still there");
    }

    @Test
    void anOrphanInTheDeadLetterQueueWhoseLabelledCopyIsRefusedIsRecordedAndAlertedOnceAndKeptAsItIs() {
        // Moved to the DLQ by SQS's redrive or by hand, with no quarantine attributes; the DLQ refuses its labelled copy for
        // good (over 1 MiB with the labels), and without the vault the original is the only copy of the payload.
        Queues queues = queues();
        sqs.sendMessage(b -> b.queueUrl(queues.url(names.deadLetterQueue())).messageBody(Queues.permitV3("P-ORPHAN-R"))
                .messageAttributes(Queues.sdk(Queues.permitAttributes("orphan-r", "tenant-r", 3))));

        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("orphan-r")).isPresent());
        QuarantineRecord q = quarantine.find(key("orphan-r")).orElseThrow();
        assertEquals(FailureClass.REDRIVEN, q.failureClass());
        assertEquals(DeadLetterCopy.State.REFUSED, q.deadLetter().state());
        assertEquals(JobState.QUARANTINED, state("orphan-r"));
        int sends = RefusingDeadLetterSink.SENDS.get();
        // Later sweeps leave it be: one alert, the original still in the DLQ, no more refused sends.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() ->
                AlertSinks.WEBHOOK.stream().filter(a -> a.contains("\"orphan-r\"")).count() == 1);
        assertEquals(1, queues.depth(names.deadLetterQueue()), "the original stays: nothing else holds the payload");
        assertEquals(sends, RefusingDeadLetterSink.SENDS.get(), "a refused copy is not tried again every sweep");
        // The replay scan finds the original by its job id.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            var found = archive.find(key("orphan-r")).copies();
            if (found.isEmpty()) {
                return false;
            }
            // Leave the DLQ as the other test expects it.
            assertEquals(1, archive.delete(found));
            return true;
        });

        // One known by its body's jobId only (no job-id attribute): a replay's scan finds it too, at once after the sweep.
        java.util.Map<String, String> noId = new java.util.HashMap<>(Queues.permitAttributes("unused", "tenant-r", 3));
        noId.remove("job-id");
        sqs.sendMessage(b -> b.queueUrl(queues.url(names.deadLetterQueue()))
                .messageBody("{\"jobId\":\"orphan-body-r\"," + Queues.permitV3("P-ORPHAN-BODY").substring(1))
                .messageAttributes(Queues.sdk(noId)));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("orphan-body-r")).isPresent());
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            var found = archive.find(key("orphan-body-r")).copies();
            if (found.isEmpty()) {
                return false;
            }
            assertEquals(1, archive.delete(found), "the scan finds the original by the identity the intake gave it");
            return true;
        });
    }
}

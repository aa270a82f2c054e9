package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.ledger.JobState;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.poisonguard.vault.PayloadVault;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 10, item 4: a dead-letter queue deeper than one scan reads (500 receives of 10) is no proof
 * that a job's payload is gone. The vault finds a quarantined payload by job id in one read however deep
 * the DLQ is; for a job without a vault entry, a replay or payload view that finds nothing answers "not
 * found yet" (503) and changes nothing; it never concludes UNRECOVERABLE, a terminal state.
 */
@QuarkusTest
@TestProfile(DeepDeadLetterQueueTest.Profile.class)
class DeepDeadLetterQueueTest extends FlowTest {
    /** More than the 5,000 messages one scan reads. */
    static final int DEPTH = 5_010;

    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // A scan of 500 receives answers in seconds on an idle machine and took over the 30 s default client
            // timeout once on a loaded CI run: the client waits longer, the assertions stay the same.
            return Map.of("poison-guard.replay.settle-time", "1s", "quarkus.http.test-timeout", "120s");
        }
    }

    @Inject
    PermitReportHandler handler;

    @Inject
    PayloadVault vault;

    @Test
    void theVaultFindsAPayloadInOneReadHoweverDeepTheDlqAndAScanCutShortNeverConcludesUnrecoverable() {
        handler.legacyReader(false);
        given().auth().oauth2(Tokens.of("ada", "admin")).contentType(ContentType.JSON)
                .body(Map.of("status", "ACTIVE", "jobTypes", List.of("permit-report"), "reason", "test setup"))
                .put("/ops/tenants/t-deep").then().statusCode(200);
        Queues queues = queues();
        queues.send(Queues.permitV1("P-deep"), Queues.permitAttributes("deep-1", "t-deep", 1));
        queues.send(Queues.permitV1("P-old"), Queues.permitAttributes("deep-2", "t-deep", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("deep-1") == JobState.QUARANTINED && state("deep-2") == JobState.QUARANTINED
                && quarantine.find(key("deep-1")).isPresent() && quarantine.find(key("deep-2")).isPresent() && queues.depth(names.jobsQueue()) == 0);
        assertTrue(vault.find(key("deep-1")).isPresent(), "the quarantine kept the payload by job id");
        // deep-2 stands for a job quarantined before the vault existed: the DLQ is its only copy.
        vault.discard(key("deep-2"), Integer.MAX_VALUE);
        assertTrue(vault.find(key("deep-2")).isEmpty());
        // Both DLQ copies are gone and the queue is deeper than a scan reads: a scan cannot tell which.
        assertEquals(2, queues.drain(names.deadLetterQueue()).size());
        String dlq = queues.url(names.deadLetterQueue());
        for (int i = 0; i < DEPTH; i += 10) {
            int from = i;
            List<SendMessageBatchRequestEntry> batch = IntStream.range(from, Math.min(DEPTH, from + 10))
                    .mapToObj(n -> SendMessageBatchRequestEntry.builder().id("f" + n).messageBody("{\"filler\":" + n + "}")
                            .messageAttributes(Queues.sdk(Map.of("job-id", "filler-" + n))).build()).toList();
            sqs.sendMessageBatch(b -> b.queueUrl(dlq).entries(batch));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> quarantine.find(key("deep-2")).orElseThrow().quarantinedAt()
                .isBefore(Instant.now().minusSeconds(1)));

        // Without a vault entry and with a scan cut short: "not found yet", nothing changes.
        given().auth().oauth2(Tokens.of("olga", "operator")).contentType(ContentType.JSON)
                .body(Map.of("reason", "deep queue", "dryRun", false))
                .post("/ops/quarantine/deep-2/replay").then().statusCode(503).body("title", equalTo("PAYLOAD_NOT_FOUND_YET"));
        assertEquals(JobState.QUARANTINED, state("deep-2"));
        assertEquals(QuarantineStatus.QUARANTINED, quarantine.find(key("deep-2")).orElseThrow().status());
        given().auth().oauth2(Tokens.of("pat", "payload-reader")).get("/ops/quarantine/deep-2/payload?reason=deep queue")
                .then().statusCode(503).body("title", equalTo("PAYLOAD_NOT_FOUND_YET"));
        assertEquals(JobState.QUARANTINED, state("deep-2"));

        // With the vault: the payload view and the replay find deep-1's payload by key, the DLQ depth does not matter.
        given().auth().oauth2(Tokens.of("pat", "payload-reader")).get("/ops/quarantine/deep-1/payload?reason=deep queue")
                .then().statusCode(200).body("body", equalTo(Queues.permitV1("P-deep")));
        handler.legacyReader(true);
        given().auth().oauth2(Tokens.of("olga", "operator")).contentType(ContentType.JSON)
                .body(Map.of("reason", "deep queue, reader fixed", "dryRun", false))
                .post("/ops/quarantine/deep-1/replay").then().statusCode(202);
        await().atMost(Duration.ofSeconds(30)).until(() -> state("deep-1") == JobState.SUCCEEDED);
        assertEquals(2, ledger.find(key("deep-1")).orElseThrow().generation());
        assertTrue(vault.find(key("deep-1")).isEmpty(), "a replay that went out forgets the kept payload");
    }
}

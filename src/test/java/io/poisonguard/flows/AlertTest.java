package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.ledger.JobState;
import io.poisonguard.testing.AlertSinks;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Invariant 9: a quarantine produces exactly one alert naming the job, delivered to a webhook and to SNS. */
@QuarkusTest
@TestProfile(AlertTest.Profile.class)
class AlertTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(AlertSinks.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.failure.permanent.max-attempts", "2");
        }
    }

    @Inject
    ObjectMapper json;

    @Test
    void aQuarantineSendsExactlyOneAlertNamingTheJobToTheWebhookAndToSns() throws Exception {
        Queues queues = new Queues(sqs, names);
        queues.send(Queues.permitV1("P-ALERT"), Queues.permitAttributes("alert-1", "tenant-z", 1));
        queues.send(Queues.permitV3("P-FINE"), Queues.permitAttributes("alert-ok", "tenant-z", 3));

        await().atMost(Duration.ofSeconds(30)).until(() -> AlertSinks.WEBHOOK.size() >= 1 && AlertSinks.SNS.size() >= 1);
        // A duplicate copy of the quarantined job is forwarded to the DLQ without a second alert.
        queues.send(Queues.permitV1("P-ALERT"), Queues.permitAttributes("alert-1", "tenant-z", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.deadLetterQueue()) == 2
                && ledger.find(key("alert-ok")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false));
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> AlertSinks.WEBHOOK.size() == 1 && AlertSinks.SNS.size() == 1);

        JsonNode hook = json.readTree(AlertSinks.WEBHOOK.get(0));
        assertEquals("job.quarantined", hook.get("event").asText());
        assertEquals("alert-1", hook.get("jobId").asText());
        assertEquals("tenant-z", hook.get("tenant").asText());
        assertEquals("PERMANENT", hook.get("failureClass").asText());
        assertEquals(2, hook.get("attempts").asInt());
        // The link names the tenant: a job id another tenant uses too would otherwise answer 409 and make the on-call ask which.
        assertEquals("https://ops.example.test/ops/quarantine/alert-1?tenant=tenant-z", hook.get("link").asText());
        assertTrue(!AlertSinks.WEBHOOK.get(0).contains("Old Shape"), "no payload in the alert");
        JsonNode sns = json.readTree(AlertSinks.SNS.get(0));
        assertEquals("alert-1", sns.get("jobId").asText());
        assertEquals(ledger.find(key("alert-1")).orElseThrow().quarantineReason(), sns.get("reason").asText());
        System.out.println("\n[alert] webhook and SNS each got one alert: " + AlertSinks.WEBHOOK.get(0));
    }
}

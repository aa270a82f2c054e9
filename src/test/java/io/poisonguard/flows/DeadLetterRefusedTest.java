package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.AlertSinks;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 10, item 3: when the dead-letter queue refuses a copy for good, the quarantine still becomes
 * visible (record and alert) with the refusal named; the vault holds the payload, so the source message
 * is deleted and the payload stays readable ({@link DeadLetterRefusedWithoutVaultTest} covers the vault off).
 */
@QuarkusTest
@TestProfile(DeadLetterRefusedTest.Profile.class)
class DeadLetterRefusedTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(AlertSinks.class));
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(RefusingDeadLetterSink.class);
        }
    }

    @Test
    void aPermanentlyRefusedDeadLetterCopyStillGetsItsRecordAndOneAlertNamingTheRefusal() {
        Queues queues = queues();
        queues.send(Queues.permitV3("P-R"), Queues.permitAttributes("refused-1", "tenant-r", 99));

        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("refused-1")).isPresent()
                && AlertSinks.WEBHOOK.stream().anyMatch(a -> a.contains("\"refused-1\"")));

        QuarantineRecord q = quarantine.find(key("refused-1")).orElseThrow();
        assertEquals(JobState.QUARANTINED, state("refused-1"));
        assertEquals(DeadLetterCopy.State.REFUSED, q.deadLetter().state());
        assertEquals("InvalidParameterValue", q.deadLetter().detail());
        assertFalse(q.deadLetter().sourceKept(), "the vault holds the payload: the source message goes");
        assertTrue(RefusingDeadLetterSink.SENDS.get() >= 1);
        assertEquals(0, queues.depth(names.deadLetterQueue()));
        await().atMost(Duration.ofSeconds(10)).until(() -> queues.depth(names.jobsQueue()) == 0);
        assertEquals(1, AlertSinks.WEBHOOK.stream().filter(a -> a.contains("\"refused-1\"")).count(), "one alert");

        given().auth().oauth2(Tokens.of("vera", "viewer")).when().get("/ops/quarantine/refused-1").then().statusCode(200)
                .body("record.deadLetter.state", equalTo("REFUSED"))
                .body("record.deadLetter.sourceKept", equalTo(false));
        // Nothing lost: the payload path reads it from the vault.
        given().auth().oauth2(Tokens.of("pat", "payload-reader")).get("/ops/quarantine/refused-1/payload?reason=refused copy")
                .then().statusCode(200).body("body", equalTo(Queues.permitV3("P-R")));
    }
}

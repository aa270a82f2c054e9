package io.poisonguard.flows;

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
    public static class Profile extends DeadLetterRefusedTest.Profile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> c = new HashMap<>(super.getConfigOverrides());
            c.put("poison-guard.payload-vault.enabled", "false");
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
    }
}

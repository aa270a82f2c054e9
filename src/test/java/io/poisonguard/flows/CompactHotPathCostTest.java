package io.poisonguard.flows;

import io.poisonguard.ledger.JobState;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link HotPathCostTest} with {@code poison-guard.ledger.item-format=compact}: the same two writes per healthy
 * message, and the items the service writes hold only the key, version, expiry, history and record.
 */
@QuarkusTest
@TestProfile(CompactHotPathCostTest.Profile.class)
class CompactHotPathCostTest extends HotPathCostTest {

    public static class Profile extends HotPathCostTest.Profile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> o = new HashMap<>(super.getConfigOverrides());
            o.put("poison-guard.ledger.item-format", "compact");
            return o;
        }
    }

    @Test
    void theServiceWritesCompactItems() {
        Queues queues = queues();
        queues.send(Queues.permitV3("P-COMPACT"), Queues.permitAttributes("compact-0", "tenant-h", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("compact-0") == JobState.SUCCEEDED);
        Map<String, AttributeValue> item = dynamo.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true)
                .key(Map.of("jobId", AttributeValue.fromS(key("compact-0").storage())))).item();
        assertEquals(Set.of("jobId", "version", "expiresAt", "history", "record"), item.keySet());
        assertEquals("2", item.get("version").n(), "created, then ended: two writes");
    }
}

package io.poisonguard.flows;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link HotPathCostTest} with {@code poison-guard.ledger.item-format=attributes} (the format of releases before the
 * compact one, which a fleet that may roll back to one of them keeps): the same two writes per healthy message, and
 * the items hold one attribute per record field.
 */
@QuarkusTest
@TestProfile(AttributesHotPathCostTest.Profile.class)
class AttributesHotPathCostTest extends HotPathCostTest {

    public static class Profile extends HotPathCostTest.Profile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> o = new HashMap<>(super.getConfigOverrides());
            o.put("poison-guard.ledger.item-format", "attributes");
            return o;
        }
    }

    @Override
    protected void assertFinishedItemFormat(Map<String, AttributeValue> item) {
        assertFalse(item.containsKey("record"), item.keySet().toString());
        assertTrue(item.keySet().containsAll(Set.of("jobId", "version", "expiresAt", "history", "tenant", "jobType", "state",
                "attempt", "effects")), item.keySet().toString());
    }
}

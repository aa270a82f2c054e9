package io.poisonguard.pipeline;

import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The DynamoDB client's connection pool is sized from what the worker may have unfinished at once: every such message
 * can be making one ledger call, and a call that finds the pool empty waits for a connection (the SDK's default pool
 * of 50 made ledger writes queue at concurrency 8: BENCHMARKS.md, twenty-second table).
 */
class LedgerConnectionsTest {

    private static SmallRyeConfig config(Map<String, String> properties, Map<String, String> env, String profile) {
        return new SmallRyeConfigBuilder()
                .withProfile(profile)
                .addDefaultInterceptors()
                .withSources(new PropertiesConfigSource(properties, "application.properties", 250))
                .withSources(new EnvConfigSource(env, 300))
                .withSources(new LedgerConnections())
                .build();
    }

    private static int pool(SmallRyeConfig config) {
        return config.getValue(LedgerConnections.KEY, Integer.class);
    }

    @Test
    void theDefaultWorkerGetsAConnectionForEveryMessageItMayHoldUnfinished() {
        // Concurrency 8 and a reserve of up to 96 (12 a slot): 2 x 104 unfinished, plus the calls beside the messages.
        assertEquals(2 * (8 + 96) + LedgerConnections.BESIDE_MESSAGES, pool(config(Map.of(), Map.of(), "prod")));
        assertEquals(LedgerConnections.forWorker(8, OptionalInt.empty()), pool(config(Map.of(), Map.of(), "prod")));
    }

    @Test
    void theBoundFollowsTheConcurrencyAndAFixedPrefetch() {
        assertEquals(2 * (32 + 100) + LedgerConnections.BESIDE_MESSAGES,
                pool(config(Map.of("poison-guard.consumer.concurrency", "32"), Map.of(), "prod")));
        assertEquals(2 * (100 + 100) + LedgerConnections.BESIDE_MESSAGES,
                pool(config(Map.of(), Map.of("POISON_GUARD_CONSUMER_CONCURRENCY", "100"), "prod")));
        assertEquals(2 * (64 + 20) + LedgerConnections.BESIDE_MESSAGES,
                pool(config(Map.of("poison-guard.consumer.concurrency", "64", "poison-guard.consumer.prefetch", "20"), Map.of(), "prod")));
        assertEquals(2 * (16 + 100) + LedgerConnections.BESIDE_MESSAGES,
                pool(config(Map.of("%prod.poison-guard.consumer.concurrency", "16", "poison-guard.consumer.concurrency", "4"), Map.of(), "prod")));
    }

    @Test
    void neverFewerThanTheSdksOwnDefault() {
        // Concurrency 2 with a fixed reserve of 1: 2 x 3 unfinished, but a pool never shrinks below the SDK's 50.
        assertEquals(LedgerConnections.SDK_DEFAULT, pool(config(Map.of("poison-guard.consumer.concurrency", "2",
                "poison-guard.consumer.prefetch", "1"), Map.of(), "prod")));
    }

    @Test
    void aPoolSetByTheOperatorWins() {
        assertEquals(30, pool(config(Map.of("quarkus.dynamodb.sync-client.apache.max-connections", "30",
                "poison-guard.consumer.concurrency", "64"), Map.of(), "prod")));
        assertEquals(500, pool(config(Map.of(), Map.of("QUARKUS_DYNAMODB_SYNC_CLIENT_APACHE_MAX_CONNECTIONS", "500"), "prod")));
    }

    @Test
    void aConcurrencyThatIsNotANumberLeavesTheRefusalToTheConfigMapping() {
        // The mapping fails the boot naming poison-guard.consumer.concurrency; the pool must not fail it first.
        assertEquals(LedgerConnections.forWorker(8, OptionalInt.empty()),
                pool(config(Map.of("poison-guard.consumer.concurrency", "eight"), Map.of(), "prod")));
    }

    @Test
    void aPoolBelowTheBoundIsReportedAtBootNamingTheKey() {
        LedgerConnections.PoolLine line = LedgerConnections.describe(30, 64, OptionalInt.empty());
        assertTrue(line.warning());
        String warning = line.text();
        assertTrue(warning.contains(LedgerConnections.KEY + "=30"), warning);
        assertTrue(warning.contains(String.valueOf(LedgerConnections.forWorker(64, OptionalInt.empty()))), warning);
        LedgerConnections.PoolLine enough = LedgerConnections.describe(224, 8, OptionalInt.empty());
        assertFalse(enough.warning());
        assertFalse(enough.text().contains(LedgerConnections.KEY), enough.text());
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The fleet's replay count on the wire: of many claims racing for one window, exactly its limit are granted. */
class DynamoReplayQuotaTest {
    static DynamoDbClient dynamo;
    static String table;

    @BeforeAll
    static void table() {
        dynamo = EmulatorClients.dynamo(Emulators.shared());
        Names names = new Names("rq" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        table = names.bulkReplaysTable();
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    @Test
    void ofClaimsRacingForOneWindowExactlyItsLimitAreGranted() throws Exception {
        // Two instances, each its own object over the same table.
        List<DynamoReplayQuota> instances = List.of(new DynamoReplayQuota(dynamo, table), new DynamoReplayQuota(dynamo, table));
        long window = Instant.now().getEpochSecond();
        Instant forget = Instant.now().plusSeconds(3600);
        List<Callable<Boolean>> claims = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            DynamoReplayQuota q = instances.get(i % 2);
            claims.add(() -> q.claim(window, 5, forget));
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        int granted = 0;
        try {
            for (Future<Boolean> f : pool.invokeAll(claims)) {
                granted += f.get() ? 1 : 0;
            }
        } finally {
            pool.shutdown();
        }

        assertEquals(5, granted);
        assertTrue(instances.get(0).claim(window + 1, 5, forget), "the next window counts afresh");
        assertTrue(new DynamoBulkReplayStore(dynamo, table, Clock.systemUTC()).find(DynamoReplayQuota.PREFIX + window).isEmpty(),
                "a count is no bulk replay");
    }
}

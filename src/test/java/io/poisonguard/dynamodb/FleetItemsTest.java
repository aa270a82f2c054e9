package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.systemic.GuardBoard;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fleet's own items in the bulk replays table, on the wire: the replay count (of many claims racing for one second,
 * exactly its limit are granted) and the guard board (posts set and take down one worker's attribute each, and a resume only
 * moves forward). Neither reads as a bulk replay.
 */
class FleetItemsTest {
    static DynamoDbClient dynamo;
    static String table;

    @BeforeAll
    static void table() {
        dynamo = EmulatorClients.dynamo(Emulators.shared());
        Names names = new Names("fi" + UUID.randomUUID().toString().substring(0, 6));
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

    @Test
    void postsOfSeveralWorkersReadBackAndAResumeOnlyMovesForward() {
        DynamoGuardBoard a = new DynamoGuardBoard(dynamo, table);
        DynamoGuardBoard b = new DynamoGuardBoard(dynamo, table);
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);

        a.tripped("pod-a.ns-1234", now.minusSeconds(60), "5 jobs failed alike (PERMANENT IllegalArgumentException)", now);
        b.tripped("pod-b.ns-99", now.minusSeconds(30), "20 quarantines within 1m", now);
        b.tripped("pod-c.ns-7", now.minusSeconds(10), "20 quarantines within 1m", now);
        a.cleared("pod-c.ns-7");
        a.resumed(now.minusSeconds(120));
        b.resumed(now.minusSeconds(600));

        GuardBoard.Board board = a.read();
        assertEquals(Set.of("pod-a.ns-1234", "pod-b.ns-99"), board.workers().keySet());
        assertEquals(new GuardBoard.Posted(now.minusSeconds(60), "5 jobs failed alike (PERMANENT IllegalArgumentException)", now),
                board.workers().get("pod-a.ns-1234"));
        assertEquals(Optional.of(now.minusSeconds(120)), board.resumedAt(), "an older resume does not move it back");

        a.forget(List.of("pod-a.ns-1234"));
        assertEquals(Set.of("pod-b.ns-99"), a.read().workers().keySet());
        assertTrue(new DynamoBulkReplayStore(dynamo, table, Clock.systemUTC()).find(DynamoGuardBoard.ID).isEmpty(), "the board is no batch");
    }
}

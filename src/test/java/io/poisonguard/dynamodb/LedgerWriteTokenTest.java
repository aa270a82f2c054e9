package io.poisonguard.dynamodb;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.time.Clock;
import java.time.Instant;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Issue 10, lost responses: a conditional write whose answer was lost is sent again (by the SDK's
 * retry, or by our own after an outage). The second send fails its own condition; the store must
 * recognise the write as its own instead of reporting a conflict (a phantom crash, a dropped attempt).
 */
class LedgerWriteTokenTest {
    static DynamoDbClient dynamo;
    static DynamoLedgerStore ledger;
    static String tableName;

    @BeforeAll
    static void table() {
        Emulators emulators = Emulators.shared();
        dynamo = EmulatorClients.dynamo(emulators);
        Names names = new Names("tok" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        tableName = names.ledgerTable();
        ledger = new DynamoLedgerStore(dynamo, tableName, Clock.systemUTC());
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static LedgerRecord start(String jobId, String worker) {
        Instant now = Instant.now();
        return LedgerRecord.fresh(jobId, "acme", "permit-report", 1, now).withAttempt(1).moveTo(JobState.ACTIVE, now)
                .withEntry(AttemptEntry.started(1, 1, now, worker), 10).withLease(worker, now.plusSeconds(60));
    }

    /**
     * The ledger gate's write probe (after a refused write): a conditional create of one item of no tenant, written the first
     * time and answered by its failed condition after that, on the real protocol.
     */
    @Test
    void theGatesProbeWriteIsAnsweredTheFirstTimeAndEveryTimeAfter() {
        LedgerRecord probe = LedgerRecord.fresh("poison-guard:ledger-probe", null, "poison-guard-probe", 1, Instant.now());
        ledger.write(probe);
        org.junit.jupiter.api.Assertions.assertThrows(io.poisonguard.ledger.LedgerConflict.class,
                () -> ledger.write(LedgerRecord.fresh("poison-guard:ledger-probe", null, "poison-guard-probe", 1, Instant.now().plusSeconds(5))));
    }

    @Test
    void theSameWriteSentAgainIsRecognisedAsItsOwn() {
        LedgerRecord first = start("job-a", "w1");
        LedgerRecord written = ledger.write(first);
        assertEquals(written, ledger.write(first), "a resend of a write that landed is a success, not a conflict");
        assertEquals(1, ledger.find(new JobKey("acme", "job-a")).orElseThrow().version());
    }

    @Test
    void anotherWritersWriteOnTheSameVersionIsStillAConflict() {
        ledger.write(start("job-b", "w1"));
        assertThrows(LedgerConflict.class, () -> ledger.write(start("job-b", "w2")));
        assertEquals("w1", ledger.find(new JobKey("acme", "job-b")).orElseThrow().leaseOwner());
    }

    @Test
    void aResendOfAnUpdateIsRecognisedToo() {
        LedgerRecord created = ledger.write(start("job-c", "w1"));
        LedgerRecord renewal = created.withLease("w1", created.leaseUntil().plusSeconds(30));
        LedgerRecord renewed = ledger.write(renewal);
        assertEquals(renewed, ledger.write(renewal), "the heartbeat's renewal sent twice");
        assertEquals(2, ledger.find(new JobKey("acme", "job-c")).orElseThrow().version());
    }

    @Test
    void aResendOfAWholeItemPutIsRecognisedToo() {
        LedgerRecord created = ledger.write(start("job-d", "w1"));
        // Two stores holding version 1's image both send the same whole-item put (as the SDK's retry of a put
        // whose answer was lost does): the second fails its condition and is recognised by its token.
        DynamoLedgerStore once = new DynamoLedgerStore(dynamo, tableName, Clock.systemUTC());
        DynamoLedgerStore again = new DynamoLedgerStore(dynamo, tableName, Clock.systemUTC());
        once.find(new JobKey("acme", "job-d")).orElseThrow();
        again.find(new JobKey("acme", "job-d")).orElseThrow();
        LedgerRecord ended = created.moveTo(JobState.SUCCEEDED, created.updatedAt().plusSeconds(1)).withLease(null, null);
        LedgerRecord written = once.write(ended);
        assertEquals(written, again.write(ended), "the same put sent twice is a success, not a conflict");
        assertEquals(2, ledger.find(new JobKey("acme", "job-d")).orElseThrow().version());
        assertThrows(LedgerConflict.class, () -> new DynamoLedgerStore(dynamo, tableName, Clock.systemUTC())
                .write(created.withLease("w2", created.leaseUntil())), "a different write on version 1 is still a conflict");
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;

import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ledger.legacy-keys}: an item keyed by the bare job id (written by a release from before tenant-scoped keys) is
 * moved to its scoped key when read. Mid rolling upgrade an older worker may still write that bare item.
 */
class LegacyKeyMoveTest {
    static DynamoDbClient plain;
    static DynamoDbClient moving;
    static Names names;
    /** Runs once just before the mover's DeleteItem of the bare item, as an older worker's write landing then. */
    static final AtomicReference<Runnable> beforeDelete = new AtomicReference<>();

    @BeforeAll
    static void tables() {
        plain = EmulatorClients.dynamo(Emulators.shared());
        moving = EmulatorClients.dynamo(Emulators.shared(), new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof DeleteItemRequest) {
                    Runnable r = beforeDelete.getAndSet(null);
                    if (r != null) {
                        r.run();
                    }
                }
            }
        });
        names = new Names("lk" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(plain, names).ensureTables();
    }

    @AfterAll
    static void close() {
        plain.close();
        moving.close();
    }

    private static void putBare(LedgerRecord r) {
        Map<String, AttributeValue> item = new HashMap<>(DynamoLedgerStore.encode(r));
        item.put(DynamoLedgerStore.KEY, AttributeValue.fromS(r.jobId()));
        plain.putItem(b -> b.tableName(names.ledgerTable()).item(item));
    }

    private static Map<String, AttributeValue> item(String key) {
        return plain.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true).key(Map.of(DynamoLedgerStore.KEY, AttributeValue.fromS(key)))).item();
    }

    /**
     * The older worker ends the job (SUCCEEDED) between the move's copy and its delete. The delete's condition fails,
     * and the move used to answer its stale copy (ACTIVE, under a lease now past) and leave both items: every new
     * worker then read the stale one. The move now takes its copy back and answers what the bare item holds.
     */
    @Test
    void anOldItemWrittenDuringTheMoveIsAnsweredAsWrittenAndNotLeftBehind() {
        Instant t = Instant.ofEpochMilli(System.currentTimeMillis()).minusSeconds(600);
        LedgerRecord running = LedgerRecord.fresh("job-old", "acme", "permit-report", 1, t).withAttempt(1).moveTo(JobState.ACTIVE, t)
                .withEntry(AttemptEntry.started(1, 1, t, "old-worker"), 10).withLease("old-worker", t.plusSeconds(60)).withVersion(3);
        putBare(running);
        Instant end = t.plusSeconds(30);
        LedgerRecord done = running.withCurrentEntry(running.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, end))
                .moveTo(JobState.SUCCEEDED, end).withLease(null, null).withVersion(4);
        beforeDelete.set(() -> putBare(done));

        LedgerRecord found = new DynamoLedgerStore(moving, names.ledgerTable(), Clock.systemUTC(), true).find(new JobKey("acme", "job-old")).orElseThrow();

        assertEquals(JobState.SUCCEEDED, found.state(), "the move answers what the older worker wrote");
        Map<String, AttributeValue> scoped = item("acme/job-old");
        Map<String, AttributeValue> bare = item("job-old");
        assertFalse(!scoped.isEmpty() && !bare.isEmpty() && DynamoLedgerStore.decode(scoped).version() < DynamoLedgerStore.decode(bare).version(),
                "a stale copy under the scoped key beside a newer bare item: " + scoped + " / " + bare);
        assertTrue(scoped.isEmpty() || DynamoLedgerStore.decode(scoped).state() == JobState.SUCCEEDED, "the scoped key holds no stale state");
    }

    /**
     * An old item whose attempt an older worker is running (its lease live) stays where that worker writes it: moved,
     * the worker's next write (its ending, a renewal) would find no item under the bare key and its outcome would be
     * lost. It is answered as it is, so a copy here waits on the lease.
     */
    @Test
    void anOldItemUnderALiveLeaseIsAnsweredUnmoved() {
        Instant t = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord running = LedgerRecord.fresh("job-leased", "acme", "permit-report", 1, t).withAttempt(1).moveTo(JobState.ACTIVE, t)
                .withEntry(AttemptEntry.started(1, 1, t, "old-worker"), 10).withLease("old-worker", t.plusSeconds(300)).withVersion(2);
        putBare(running);

        LedgerRecord found = new DynamoLedgerStore(moving, names.ledgerTable(), Clock.systemUTC(), true).find(new JobKey("acme", "job-leased")).orElseThrow();

        assertEquals("old-worker", found.leaseOwner());
        assertFalse(item("job-leased").isEmpty(), "the older worker's item stays under its bare key");
        assertTrue(item("acme/job-leased").isEmpty(), "nothing under the scoped key yet");
    }

    @Test
    void anotherTenantsScopedItemIsNoBareItemForAJobIdThatSpellsItsKey() {
        // Tenant beta's job id "acme/job-x" spells tenant acme's scoped key for its job-x: the fallback for bare items must
        // not answer acme's record for it (beta's job would be quarantined as a tenant mismatch, and beta could learn
        // which job ids acme has).
        Instant t = Instant.now();
        DynamoLedgerStore store = new DynamoLedgerStore(plain, names.ledgerTable(), Clock.systemUTC(), true);
        store.write(LedgerRecord.fresh("job-x", "acme", "permit-report", 1, t).withAttempt(1).moveTo(JobState.ACTIVE, t));

        assertTrue(store.find(new JobKey("beta", "acme/job-x")).isEmpty(), "beta's job acme/job-x has no record yet");
        assertTrue(store.find(new JobKey("acme", "job-x")).isPresent(), "acme's own job is still found");
    }
}

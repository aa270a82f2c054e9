package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Succeeded endings written in shared {@code BatchWriteItem} requests, on the real protocol (dynalite), in both item
 * formats: what lands is what the conditional write would have written; an ending whose writer's lease may be running
 * out keeps its version condition and so never overwrites a newer attempt; a batch whose answer was lost after it
 * landed is recognised as the writer's own by the conditional write that follows.
 */
@org.junit.jupiter.api.Timeout(120)
class EndingBatchesTest {
    static DynamoDbClient dynamo;
    static String table;
    static final AtomicInteger batches = new AtomicInteger();
    static final AtomicInteger batchedItems = new AtomicInteger();
    /** While set, every BatchWriteItem lands and its answer is lost. */
    static final AtomicBoolean loseAnswers = new AtomicBoolean();

    @BeforeAll
    static void table() {
        dynamo = EmulatorClients.dynamo(Emulators.shared(), new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof BatchWriteItemRequest b) {
                    batches.incrementAndGet();
                    batchedItems.addAndGet(b.requestItems().values().stream().mapToInt(List::size).sum());
                }
            }

            @Override
            public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
                if (context.request() instanceof BatchWriteItemRequest && loseAnswers.get()) {
                    throw SdkClientException.create("the answer was lost (a test's)");
                }
            }
        });
        Names names = new Names("end" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        table = names.ledgerTable();
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static DynamoLedgerStore store(boolean compact) {
        return new DynamoLedgerStore(dynamo, table, Clock.systemUTC(), false, compact).batchingEndings(1);
    }

    /** Now, in whole seconds: what the item stores (milliseconds, and the expiry in seconds) reads back equal. */
    private static Instant now() {
        return Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    }

    private static LedgerRecord started(DynamoLedgerStore ledger, String jobId, String worker) {
        Instant now = now();
        return ledger.write(LedgerRecord.fresh(jobId, "acme", "permit-report", 1, now).withAttempt(1).moveTo(JobState.ACTIVE, now)
                .withEntry(AttemptEntry.started(1, 1, now, worker), 10).withLease(worker, now.plusSeconds(60)));
    }

    private static LedgerRecord succeeded(LedgerRecord running) {
        Instant now = now();
        return running.withCurrentEntry(running.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, now))
                .moveTo(JobState.SUCCEEDED, now).withLease(null, null).withExpiry(now.plusSeconds(3600))
                .withEffects(java.util.Map.of("completion-notice", 1));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void endingsThatFinishTogetherShareRequestsAndLandAsTheConditionalWriteWould(boolean compact) throws Exception {
        DynamoLedgerStore ledger = store(compact);
        String run = UUID.randomUUID().toString().substring(0, 6);
        List<LedgerRecord> running = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            running.add(started(ledger, run + "-job-" + i, "w1"));
        }
        int batchesBefore = batches.get();
        int itemsBefore = batchedItems.get();
        List<Future<LedgerRecord>> written = new ArrayList<>();
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (LedgerRecord r : running) {
                written.add(threads.submit(() -> ledger.writeSucceeded(succeeded(r), now().plusSeconds(30))));
            }
        }
        for (int i = 0; i < running.size(); i++) {
            LedgerRecord w = written.get(i).get(10, TimeUnit.SECONDS);
            LedgerRecord stored = store(compact).find(JobKey.of(w)).orElseThrow();
            assertEquals(w, stored, "what the batch wrote reads back as the record");
            assertEquals(running.get(i).version() + 1, stored.version());
            assertEquals(JobState.SUCCEEDED, stored.state());
            assertEquals(java.util.Map.of("completion-notice", 1), stored.effects());
        }
        assertEquals(60, batchedItems.get() - itemsBefore, "every ending went in a batch");
        assertTrue(batches.get() - batchesBefore <= 30, (batches.get() - batchesBefore) + " BatchWriteItem requests for 60 endings that"
                + " finished together");
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anEndingPastItsUnfencedTimeKeepsItsConditionAndNeverOverwritesANewerAttempt(boolean compact) {
        DynamoLedgerStore ledger = store(compact);
        String jobId = "stale-" + UUID.randomUUID().toString().substring(0, 6);
        LedgerRecord ours = started(ledger, jobId, "w1");
        // Our lease ran out; another worker (a store of its own) took the job over with attempt 2.
        Instant now = now();
        LedgerRecord theirs = store(compact).write(ours.withAttempt(2).withEntry(AttemptEntry.started(2, 1, now, "w2"), 10)
                .withLease("w2", now.plusSeconds(60)));
        int itemsBefore = batchedItems.get();

        assertThrows(LedgerConflict.class, () -> ledger.writeSucceeded(succeeded(ours), now.minusSeconds(1)));

        assertEquals(itemsBefore, batchedItems.get(), "nothing was batched");
        LedgerRecord stored = ledger.find(JobKey.of(ours)).orElseThrow();
        assertEquals(theirs.version(), stored.version());
        assertEquals(JobState.ACTIVE, stored.state());
        assertEquals("w2", stored.leaseOwner(), "the newer attempt's record stands");
    }

    /**
     * The other side of the one above, the same set-up with the send-by ahead: the ending goes unconditionally and overwrites
     * what is there. That is why it is sent only while the writer's lease has a long way to run (no other worker can have
     * taken the job over), and why the one above must keep its condition.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anEndingWithinItsUnfencedTimeGoesWithoutTheCondition(boolean compact) {
        DynamoLedgerStore ledger = store(compact);
        String jobId = "fresh-" + UUID.randomUUID().toString().substring(0, 6);
        LedgerRecord ours = started(ledger, jobId, "w1");
        Instant now = now();
        store(compact).write(ours.withAttempt(2).withEntry(AttemptEntry.started(2, 1, now, "w2"), 10).withLease("w2", now.plusSeconds(60)));
        int itemsBefore = batchedItems.get();

        LedgerRecord written = ledger.writeSucceeded(succeeded(ours), now.plusSeconds(30));

        assertEquals(itemsBefore + 1, batchedItems.get(), "the ending went in a batch");
        assertEquals(written, ledger.find(JobKey.of(ours)).orElseThrow());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aBatchThatLandedWithoutAnAnswerIsRecognisedByTheConditionalWriteAfterIt(boolean compact) {
        DynamoLedgerStore ledger = store(compact);
        LedgerRecord running = started(ledger, "lost-" + UUID.randomUUID().toString().substring(0, 6), "w1");
        int itemsBefore = batchedItems.get();
        loseAnswers.set(true);
        LedgerRecord written;
        try {
            written = ledger.writeSucceeded(succeeded(running), now().plusSeconds(30));
        } finally {
            loseAnswers.set(false);
        }
        assertTrue(batchedItems.get() > itemsBefore, "the ending went in a batch first");
        assertEquals(JobState.SUCCEEDED, written.state());
        assertEquals(running.version() + 1, written.version());
        assertEquals(written, ledger.find(JobKey.of(running)).orElseThrow());
    }
}

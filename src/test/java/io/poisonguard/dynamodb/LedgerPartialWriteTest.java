package io.poisonguard.dynamodb;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
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
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11: a ledger write does not rewrite the whole item. After the create, a write sends only the
 * attributes that changed since the version it read or wrote (an attempt's entry appended, or the
 * ending attempt's entry replaced in place), and what is stored is what a full rewrite would have stored.
 */
class LedgerPartialWriteTest {
    static final List<UpdateItemRequest> sent = new CopyOnWriteArrayList<>();
    static final List<PutItemRequest> puts = new CopyOnWriteArrayList<>();
    static DynamoDbClient dynamo;
    static Names names;

    @BeforeAll
    static void table() {
        Emulators emulators = Emulators.shared();
        dynamo = EmulatorClients.dynamo(emulators, new ExecutionInterceptor() {
                    @Override
                    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                        if (context.request() instanceof UpdateItemRequest u) {
                            sent.add(u);
                        }
                        if (context.request() instanceof PutItemRequest p) {
                            puts.add(p);
                        }
                    }
                });
        names = new Names("pw" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static String lastUpdate() {
        return sent.get(sent.size() - 1).updateExpression();
    }

    @Test
    void writesAfterTheCreateSendOnlyWhatChangedAndStoreTheSameItem() {
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        // A store with nothing remembered reads what is stored, as another worker would.
        DynamoLedgerStore reader = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord started = ledger.write(LedgerRecord.fresh("job-p", "acme", "permit-report", 1, now).withAttempt(1)
                .moveTo(JobState.ACTIVE, now).withEntry(AttemptEntry.started(1, 1, now, "w1"), 3).withLease("w1", now.plusSeconds(60)));
        PutItemRequest create = puts.get(puts.size() - 1);
        assertEquals("acme/job-p", create.item().get("jobId").s(), "the create puts the whole item under its tenant-scoped key");
        assertTrue(create.item().containsKey("tenant") && create.item().containsKey("history"), create.item().keySet().toString());

        LedgerRecord failed = ledger.write(started.withFailureCounted(FailureClass.TRANSIENT).moveTo(JobState.RETRY_WAIT, now)
                .withLease(null, null).withCurrentEntry(started.currentEntry()
                        .ended(AttemptOutcome.FAILED, FailureClass.TRANSIENT, "java.io.IOException", "timed out", now)
                        .withRetryDelay(Duration.ofSeconds(2))));
        String ending = lastUpdate();
        assertFalse(ending.contains("#tenant") || ending.contains("#firstSeen") || ending.contains("#jobType"),
                "an ending write leaves unchanged attributes alone: " + ending);
        assertTrue(ending.contains("#history[0] = :historyLast"), "the ending entry is replaced in place: " + ending);
        assertTrue(ending.contains("REMOVE") && ending.contains("#leaseOwner"), "the lease is removed: " + ending);
        assertEquals(failed, reader.find(new JobKey("acme", "job-p")).orElseThrow());

        // Attempts 2, 3 and 4: the third append trims the history to its limit of 3, a full rewrite of the list.
        LedgerRecord current = failed;
        for (int attempt = 2; attempt <= 4; attempt++) {
            Instant t = now.plusSeconds(attempt);
            current = ledger.write(current.withAttempt(attempt).moveTo(JobState.ACTIVE, t)
                    .withEntry(AttemptEntry.started(attempt, 1, t, "w1"), 3).withLease("w1", t.plusSeconds(60)));
            String start = lastUpdate();
            if (attempt < 4) {
                assertTrue(start.contains("list_append(#history, :historyAdded)"), "a starting entry is appended: " + start);
            } else {
                assertTrue(start.contains("#history = :history"), "trimming rewrites the list: " + start);
            }
            assertEquals(current, reader.find(new JobKey("acme", "job-p")).orElseThrow());
        }
        LedgerRecord done = ledger.write(current.moveTo(JobState.SUCCEEDED, now.plusSeconds(9)).withLease(null, null)
                .withCurrentEntry(current.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, now.plusSeconds(9)))
                .withEffects(java.util.Map.of("notice", 4)));
        assertTrue(lastUpdate().contains("#history[2] = :historyLast"), lastUpdate());
        assertEquals(done, reader.find(new JobKey("acme", "job-p")).orElseThrow());
        assertEquals(List.of(2, 3, 4), done.history().stream().map(AttemptEntry::number).toList());
    }

    @Test
    void aWriterThatDidNotSeeTheVersionWritesEverything() {
        DynamoLedgerStore first = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        DynamoLedgerStore second = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord started = first.write(LedgerRecord.fresh("job-q", "acme", "permit-report", 1, now).withAttempt(1)
                .moveTo(JobState.ACTIVE, now).withEntry(AttemptEntry.started(1, 1, now, "w1"), 10).withLease("w1", now.plusSeconds(60)));
        // The second store never read version 1: it cannot diff, so it sends the whole item under the same condition.
        LedgerRecord renewed = second.write(started.withLease("w1", now.plusSeconds(90)));
        assertTrue(lastUpdate().contains("#tenant"), lastUpdate());
        assertEquals(renewed, first.find(new JobKey("acme", "job-q")).orElseThrow());
    }

    @Test
    void anItemWhoseHistoryIsStoredAsMapsReadsAndIsWrittenForward() {
        DynamoLedgerStore writer = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord failed = LedgerRecord.fresh("job-old", "acme", "permit-report", 1, now).withAttempt(1).moveTo(JobState.RETRY_WAIT, now)
                .withEntry(AttemptEntry.started(1, 1, now, "w1").ended(AttemptOutcome.FAILED, FailureClass.TRANSIENT, "java.io.IOException",
                        "timed out", now).withRetryDelay(Duration.ofSeconds(2)), 10)
                .withFailureCounted(FailureClass.TRANSIENT).withVersion(1);
        // As a release before this one stored it: each history entry a map.
        java.util.Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> item =
                new java.util.HashMap<>(DynamoLedgerStore.encode(failed));
        item.put("history", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromL(
                failed.history().stream().map(HistoryCodec::mapEntry).toList()));
        item.put(DynamoLedgerStore.KEY, software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("acme/job-old"));
        dynamo.putItem(b -> b.tableName(names.ledgerTable()).item(item));

        LedgerRecord read = writer.find(new JobKey("acme", "job-old")).orElseThrow();
        assertEquals(failed, read, "entries stored as maps read as they were written");
        Instant later = now.plusSeconds(5);
        LedgerRecord next = writer.write(read.withAttempt(2).moveTo(JobState.ACTIVE, later)
                .withEntry(AttemptEntry.started(2, 1, later, "w2"), 10).withLease("w2", later.plusSeconds(60)));
        assertTrue(lastUpdate().contains("#history = :history"), "a list in the old form is rewritten whole: " + lastUpdate());
        var stored = dynamo.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true)
                .key(java.util.Map.of(DynamoLedgerStore.KEY, software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("acme/job-old"))))
                .item().get("history").l();
        assertEquals(2, stored.size());
        assertTrue(stored.stream().allMatch(e -> e.s() != null), "both entries are now stored as text: " + stored);
        assertEquals(next, new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC()).find(new JobKey("acme", "job-old")).orElseThrow());
    }
}

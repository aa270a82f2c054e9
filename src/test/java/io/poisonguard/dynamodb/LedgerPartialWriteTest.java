package io.poisonguard.dynamodb;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.RecordingDynamo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11: a ledger write does not rewrite the whole item. After the create, a write sends only the
 * attributes that changed since the version it read or wrote (an attempt's entry appended, or the
 * ending attempt's entry replaced in place), and what is stored is what a full rewrite would have stored.
 * An item within one write unit (1 KB, every healthy job's) is put whole instead, on the condition of its
 * version: DynamoDB bills both alike there, and the put has no update expression for the server to work through.
 */
class LedgerPartialWriteTest {
    static RecordingDynamo recording;
    static List<UpdateItemRequest> sent;
    static List<PutItemRequest> puts;
    static DynamoDbClient dynamo;
    static Names names;

    @BeforeAll
    static void table() {
        recording = RecordingDynamo.onFreshTables("pw");
        sent = recording.updates();
        puts = recording.puts();
        dynamo = recording.client();
        names = recording.names();
    }

    @AfterAll
    static void close() {
        recording.close();
    }

    /** A store that updates every item by its changes, however small (the default writes small items whole). */
    private static DynamoLedgerStore partial() {
        return new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC(), false, 0);
    }

    private static String lastUpdate() {
        return sent.get(sent.size() - 1).updateExpression();
    }

    @Test
    void writesAfterTheCreateSendOnlyWhatChangedAndStoreTheSameItem() {
        DynamoLedgerStore ledger = partial();
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
        DynamoLedgerStore first = partial();
        DynamoLedgerStore second = partial();
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
        DynamoLedgerStore writer = partial();
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

    private static LedgerRecord started(String jobId, Instant now) {
        return LedgerRecord.fresh(jobId, "acme", "permit-report", 1, now).withAttempt(1).moveTo(JobState.ACTIVE, now)
                .withEntry(AttemptEntry.started(1, 1, now, "w1"), 10).withLease("w1", now.plusSeconds(60));
    }

    @Test
    void theStoreKeepsAnImageForAJobsNextWriteOnlyWhileOneCanFollow() {
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        for (int i = 0; i < 40; i++) {
            LedgerRecord started = ledger.write(started("job-k" + i, now));
            ledger.write(started.moveTo(JobState.SUCCEEDED, now).withLease(null, null)
                    .withCurrentEntry(started.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, now)));
        }
        assertEquals(0, ledger.imagesKept(), "no write follows a success: its image is not kept");

        LedgerRecord running = ledger.write(started("job-k-running", now));
        assertEquals(1, ledger.imagesKept(), "a running attempt's image is the base of its ending write");
        LedgerRecord waiting = ledger.write(running.withFailureCounted(FailureClass.TRANSIENT).moveTo(JobState.RETRY_WAIT, now)
                .withLease(null, null).withCurrentEntry(running.currentEntry()
                        .ended(AttemptOutcome.FAILED, FailureClass.TRANSIENT, "java.io.IOException", "timed out", now)));
        assertEquals(1, ledger.imagesKept(), "a job waiting for its retry will be written again");
        assertEquals(waiting, ledger.find(new JobKey("acme", "job-k-running")).orElseThrow());
    }

    @Test
    void aHealthyJobsEndingWriteIsOnePutOfTheWholeItemOnTheConditionOfItsVersion() {
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord started = ledger.write(started("job-w", now));
        // Another worker's store that read version 1 before this attempt ended.
        DynamoLedgerStore stale = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        assertEquals(started, stale.find(new JobKey("acme", "job-w")).orElseThrow());
        int updates = sent.size();
        int putsBefore = puts.size();
        Instant end = now.plusMillis(300);
        LedgerRecord done = ledger.write(started.moveTo(JobState.SUCCEEDED, end).withLease(null, null)
                .withCurrentEntry(started.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, end))
                .withEffects(java.util.Map.of("completion-notice", 1)));

        assertEquals(updates, sent.size(), "no UpdateItem for a small item");
        assertEquals(putsBefore + 1, puts.size(), "one PutItem ends the attempt");
        PutItemRequest ending = puts.get(puts.size() - 1);
        assertEquals("#version = :expected", ending.conditionExpression());
        assertEquals("1", ending.expressionAttributeValues().get(":expected").n(), "conditional on the version it replaces");
        assertFalse(ending.item().containsKey("leaseOwner"), "the lease is gone from the item: " + ending.item().keySet());
        assertTrue(ItemSize.of(ending.item()) <= DynamoLedgerStore.WRITE_UNIT, "within one write unit: " + ItemSize.of(ending.item()));
        assertEquals(done, new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC()).find(new JobKey("acme", "job-w")).orElseThrow());

        // A writer that still holds version 1 loses: the put's condition is the version, as the update's is.
        org.junit.jupiter.api.Assertions.assertThrows(io.poisonguard.ledger.LedgerConflict.class,
                () -> stale.write(started.withLease("w2", now.plusSeconds(90))));
        assertEquals(putsBefore + 2, puts.size(), "the stale write was a put too");
        assertEquals(done, stale.find(new JobKey("acme", "job-w")).orElseThrow(), "the stale write changed nothing");
    }

    @Test
    void anItemOverOneWriteUnitIsUpdatedByItsChanges() {
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord current = ledger.write(started("job-long", now));
        // Failed attempts with long error messages: the history alone passes 1 KB.
        for (int attempt = 1; attempt <= 5; attempt++) {
            Instant t = now.plusSeconds(attempt);
            current = ledger.write(current.moveTo(JobState.RETRY_WAIT, t).withLease(null, null).withFailureCounted(FailureClass.TRANSIENT)
                    .withCurrentEntry(current.currentEntry().ended(AttemptOutcome.FAILED, FailureClass.TRANSIENT, "java.io.IOException",
                            "permit-records answered 503: " + "upstream unavailable; ".repeat(10), t)));
            Instant next = t.plusMillis(500);
            current = ledger.write(current.withAttempt(attempt + 1).moveTo(JobState.ACTIVE, next)
                    .withEntry(AttemptEntry.started(attempt + 1, 1, next, "w1"), 10).withLease("w1", next.plusSeconds(60)));
        }
        assertTrue(ItemSize.of(DynamoLedgerStore.encode(current)) > DynamoLedgerStore.WRITE_UNIT);
        assertTrue(lastUpdate().contains("list_append(#history, :historyAdded)"), "the new entry alone is sent: " + lastUpdate());
        int putsBefore = puts.size();
        LedgerRecord done = ledger.write(current.moveTo(JobState.SUCCEEDED, now.plusSeconds(9)).withLease(null, null)
                .withCurrentEntry(current.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, now.plusSeconds(9))));
        assertEquals(putsBefore, puts.size(), "a large item is not put whole");
        assertTrue(lastUpdate().contains("#history[5] = :historyLast") && !lastUpdate().contains("#tenant"), lastUpdate());
        assertEquals(done, new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC()).find(new JobKey("acme", "job-long")).orElseThrow());
    }

    @Test
    void anAttributeThisReleaseDoesNotWriteSurvivesAWrite() {
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord stored = started("job-newer", now).withVersion(1);
        storeWithAnAttributeAddedLater(stored, "acme/job-newer");

        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        LedgerRecord read = ledger.find(new JobKey("acme", "job-newer")).orElseThrow();
        Instant end = now.plusSeconds(1);
        ledger.write(read.moveTo(JobState.SUCCEEDED, end).withLease(null, null)
                .withCurrentEntry(read.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, end)));
        var after = item("acme/job-newer");
        assertEquals("keep me", after.get("addedLater").s(), "an item holding an attribute unknown here is updated, not replaced");
        assertEquals("SUCCEEDED", after.get("state").s());
    }

    /**
     * The same, over two writes: a retry's start (updated, since the image read holds the unknown attribute) and then
     * its end. The image remembered after the update held only this release's attributes, so the end went as a whole
     * put and replaced the item, dropping the newer release's attribute on the job's second write.
     */
    @Test
    void anAttributeThisReleaseDoesNotWriteSurvivesTwoWrites() {
        Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
        LedgerRecord stored = started("job-newer2", now).withFailureCounted(FailureClass.TRANSIENT).moveTo(JobState.RETRY_WAIT, now)
                .withLease(null, null).withVersion(1);
        storeWithAnAttributeAddedLater(stored, "acme/job-newer2");

        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        LedgerRecord read = ledger.find(new JobKey("acme", "job-newer2")).orElseThrow();
        Instant retry = now.plusSeconds(1);
        LedgerRecord running = ledger.write(read.withAttempt(2).moveTo(JobState.ACTIVE, retry)
                .withEntry(AttemptEntry.started(2, 1, retry, "w1"), 10).withLease("w1", retry.plusSeconds(60)));
        Instant end = retry.plusSeconds(1);
        ledger.write(running.moveTo(JobState.SUCCEEDED, end).withLease(null, null)
                .withCurrentEntry(running.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, end)));
        var after = item("acme/job-newer2");
        assertEquals("SUCCEEDED", after.get("state").s());
        assertTrue(after.containsKey("addedLater"), "the newer release's attribute was dropped by the second write: " + after.keySet());
    }

    /**
     * A read takes an item for gone from the first millisecond of its expiry second; the create's condition allowed
     * replacing it only from the next second. A copy arriving within that second found nothing, failed its create on
     * every round and was left to redeliver (a visibility timeout lost). Both now agree.
     */
    @Test
    void anItemAReadTakesForExpiredCanBeCreatedAgainInTheSameSecond() {
        Instant expiry = Instant.ofEpochSecond(System.currentTimeMillis() / 1000 - 60);
        LedgerRecord old = started("job-expired", expiry.minusSeconds(600)).withVersion(3).withExpiry(expiry);
        java.util.Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> item = new java.util.HashMap<>(DynamoLedgerStore.encode(old));
        item.put(DynamoLedgerStore.KEY, software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("acme/job-expired"));
        dynamo.putItem(b -> b.tableName(names.ledgerTable()).item(item));

        Instant within = expiry.plusMillis(500);
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.fixed(within, java.time.ZoneOffset.UTC));
        assertTrue(ledger.find(new JobKey("acme", "job-expired")).isEmpty(), "the read takes the item for gone");
        LedgerRecord created = ledger.write(started("job-expired", within));
        assertEquals(1, created.version(), "a new job's first write");
    }

    /** Stores {@code stored} under {@code storageKey} as a newer release (mid rolling deploy) might: with one attribute this release does not know. */
    private static void storeWithAnAttributeAddedLater(LedgerRecord stored, String storageKey) {
        java.util.Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> item = new java.util.HashMap<>(DynamoLedgerStore.encode(stored));
        item.put(DynamoLedgerStore.KEY, software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS(storageKey));
        item.put("addedLater", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("keep me"));
        dynamo.putItem(b -> b.tableName(names.ledgerTable()).item(item));
    }

    private static java.util.Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> item(String storageKey) {
        return dynamo.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true)
                .key(java.util.Map.of(DynamoLedgerStore.KEY, software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS(storageKey)))).item();
    }
}

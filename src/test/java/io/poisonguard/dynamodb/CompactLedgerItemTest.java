package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.RecordingDynamo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11, the ledger's compact item format ({@code poison-guard.ledger.item-format=compact}) against the
 * emulator: what a compact store writes, that either format reads the other's items and rewrites them in its
 * own on the next write (so switching the setting either way within this release loses nothing), and that the
 * guarantees of the attribute format hold: a resent write is recognised as its own, a stale one is a conflict,
 * a large item is updated by its changes and an attribute a newer release added survives.
 */
class CompactLedgerItemTest {
    static RecordingDynamo recording;
    static List<UpdateItemRequest> updates;
    static List<PutItemRequest> puts;
    static DynamoDbClient dynamo;
    static Names names;

    @BeforeAll
    static void table() {
        recording = RecordingDynamo.onFreshTables("ci");
        updates = recording.updates();
        puts = recording.puts();
        dynamo = recording.client();
        names = recording.names();
    }

    @AfterAll
    static void close() {
        recording.close();
    }

    private static DynamoLedgerStore compact() {
        return new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC(), false, true);
    }

    private static DynamoLedgerStore attributes() {
        return new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC(), false, false);
    }

    private static LedgerRecord started(String jobId, Instant now, String worker) {
        return LedgerRecord.fresh(jobId, "acme", "permit-report", 1, now).withAttempt(1).moveTo(JobState.ACTIVE, now)
                .withEntry(AttemptEntry.started(1, 1, now, worker), 10).withLease(worker, now.plusSeconds(60));
    }

    private static LedgerRecord succeeded(LedgerRecord running, Instant at) {
        return running.moveTo(JobState.SUCCEEDED, at).withLease(null, null)
                .withCurrentEntry(running.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, at))
                .withEffects(Map.of("completion-notice", running.attempt()))
                // TTL attributes hold epoch seconds.
                .withExpiry(at.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).plusSeconds(86_400));
    }

    private static Map<String, AttributeValue> stored(String jobId) {
        return dynamo.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true)
                .key(Map.of(DynamoLedgerStore.KEY, AttributeValue.fromS("acme/" + jobId)))).item();
    }

    private static Instant now() {
        return Instant.ofEpochMilli(System.currentTimeMillis());
    }

    @Test
    void aHealthyJobsItemHoldsFiveAttributesAndBothFormatsReadIt() {
        DynamoLedgerStore ledger = compact();
        Instant now = now();
        LedgerRecord running = ledger.write(started("job-c1", now, "w1"));
        assertEquals(Set.of("jobId", "version", "history", "record"), stored("job-c1").keySet(), "the create");
        PutItemRequest create = puts.get(puts.size() - 1);
        assertEquals("attribute_not_exists(#key) OR #expiresAt <= :now", create.conditionExpression(), "a first delivery's create is conditional");

        int updatesBefore = updates.size();
        LedgerRecord done = ledger.write(succeeded(running, now.plusMillis(300)));
        assertEquals(updatesBefore, updates.size(), "a small item's ending write is one put");
        assertEquals(Set.of("jobId", "version", "expiresAt", "history", "record"), stored("job-c1").keySet(), "the ended item");
        assertEquals("2", stored("job-c1").get("version").n());
        assertEquals(done, compact().find(new JobKey("acme", "job-c1")).orElseThrow());
        assertEquals(done, attributes().find(new JobKey("acme", "job-c1")).orElseThrow(), "a store writing the other format reads it too");
        long size = ItemSize.of(stored("job-c1"));
        long asAttributes = ItemSize.of(withKey(DynamoLedgerStore.encode(done), "job-c1"));
        // Not fewer bytes (the field names travel inside the JSON), but as many write units: one.
        assertTrue(size <= DynamoLedgerStore.WRITE_UNIT && size < asAttributes + 100, size + " bytes against " + asAttributes);
    }

    private static Map<String, AttributeValue> withKey(Map<String, AttributeValue> attrs, String jobId) {
        Map<String, AttributeValue> item = new HashMap<>(attrs);
        item.put(DynamoLedgerStore.KEY, AttributeValue.fromS("acme/" + jobId));
        return item;
    }

    @Test
    void anItemIsRewrittenInTheWritersFormatOnItsNextWriteEitherWay() {
        Instant now = now();
        // Written by a release (or a setting) of the attribute format, ended by a compact store that read it.
        LedgerRecord running = attributes().write(started("job-c2", now, "w1"));
        assertTrue(stored("job-c2").containsKey("state") && stored("job-c2").containsKey("writeToken"));
        DynamoLedgerStore ledger = compact();
        assertEquals(running, ledger.find(new JobKey("acme", "job-c2")).orElseThrow());
        LedgerRecord done = ledger.write(succeeded(running, now.plusSeconds(1)));
        assertEquals(Set.of("jobId", "version", "expiresAt", "history", "record"), stored("job-c2").keySet());
        assertEquals(done, attributes().find(new JobKey("acme", "job-c2")).orElseThrow());

        // And back: the setting switched to attributes again, a compact item is rewritten as attributes.
        LedgerRecord compactRunning = compact().write(started("job-c3", now, "w1"));
        DynamoLedgerStore back = attributes();
        assertEquals(compactRunning, back.find(new JobKey("acme", "job-c3")).orElseThrow());
        LedgerRecord ended = back.write(succeeded(compactRunning, now.plusSeconds(1)));
        assertFalse(stored("job-c3").containsKey("record"), stored("job-c3").keySet().toString());
        assertEquals("SUCCEEDED", stored("job-c3").get("state").s());
        assertEquals(ended, compact().find(new JobKey("acme", "job-c3")).orElseThrow());
    }

    @Test
    void anUpdateByChangesAlsoMovesTheItemToTheWritersFormat() {
        Instant now = now();
        // Stores that update every item by its changes (as they do items over one write unit).
        DynamoLedgerStore partialCompact = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC(), false, 0, true);
        LedgerRecord running = attributes().write(started("job-c4", now, "w1"));
        partialCompact.find(new JobKey("acme", "job-c4")).orElseThrow();
        LedgerRecord renewed = partialCompact.write(running.withLease("w1", now.plusSeconds(90)));
        String update = updates.get(updates.size() - 1).updateExpression();
        assertTrue(update.contains("REMOVE") && update.contains("#state") && update.contains("#writeToken"), update);
        assertEquals(Set.of("jobId", "version", "history", "record"), stored("job-c4").keySet());
        assertEquals(renewed, attributes().find(new JobKey("acme", "job-c4")).orElseThrow());

        // A compact store that never read the item (another worker wrote its version) still leaves no stale attribute.
        LedgerRecord waiting = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC(), false, 0, false)
                .write(renewed.moveTo(JobState.RETRY_WAIT, now.plusSeconds(2)).withLease(null, null).withFailureCounted(FailureClass.TRANSIENT)
                        .withCurrentEntry(renewed.currentEntry().ended(AttemptOutcome.FAILED, FailureClass.TRANSIENT, "java.io.IOException",
                                "timed out", now.plusSeconds(2)).withRetryDelay(Duration.ofSeconds(4))));
        assertTrue(stored("job-c4").containsKey("state") && !stored("job-c4").containsKey("record"), stored("job-c4").keySet().toString());
        LedgerRecord again = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC(), false, 0, true)
                .write(waiting.withAttempt(2).moveTo(JobState.ACTIVE, now.plusSeconds(6))
                        .withEntry(AttemptEntry.started(2, 1, now.plusSeconds(6), "w2"), 10).withLease("w2", now.plusSeconds(66)));
        assertEquals(Set.of("jobId", "version", "history", "record"), stored("job-c4").keySet());
        assertEquals(again, attributes().find(new JobKey("acme", "job-c4")).orElseThrow());
    }

    @Test
    void aLargeCompactItemGrowsItsHistoryByAppendingAndIsNotPutWhole() {
        DynamoLedgerStore ledger = compact();
        Instant now = now();
        LedgerRecord current = ledger.write(started("job-c5", now, "w1"));
        for (int attempt = 1; attempt <= 5; attempt++) {
            Instant t = now.plusSeconds(attempt);
            current = ledger.write(current.moveTo(JobState.RETRY_WAIT, t).withLease(null, null).withFailureCounted(FailureClass.TRANSIENT)
                    .withCurrentEntry(current.currentEntry().ended(AttemptOutcome.FAILED, FailureClass.TRANSIENT, "java.io.IOException",
                            "permit-records answered 503: " + "upstream unavailable; ".repeat(10), t)));
            Instant next = t.plusMillis(500);
            current = ledger.write(current.withAttempt(attempt + 1).moveTo(JobState.ACTIVE, next)
                    .withEntry(AttemptEntry.started(attempt + 1, 1, next, "w1"), 10).withLease("w1", next.plusSeconds(60)));
        }
        assertTrue(ItemSize.of(stored("job-c5")) > DynamoLedgerStore.WRITE_UNIT, "the history alone passes one write unit");
        String last = updates.get(updates.size() - 1).updateExpression();
        assertTrue(last.contains("list_append(#history, :historyAdded)") && last.contains("#record = :record"), last);
        int putsBefore = puts.size();
        LedgerRecord done = ledger.write(succeeded(current, now.plusSeconds(9)));
        assertEquals(putsBefore, puts.size(), "a large item is not put whole");
        assertTrue(updates.get(updates.size() - 1).updateExpression().contains("#history[5] = :historyLast"));
        assertEquals(done, attributes().find(new JobKey("acme", "job-c5")).orElseThrow());
        assertEquals(6, done.history().size());
    }

    @Test
    void aResentCompactWriteIsItsOwnAndAnotherWritersIsAConflict() {
        Instant now = now();
        LedgerRecord first = started("job-c6", now, "w1");
        LedgerRecord created = compact().write(first);
        assertEquals(created, compact().write(first), "the create sent again (its answer lost) is a success");
        assertThrows(LedgerConflict.class, () -> compact().write(started("job-c6", now, "w2")), "another worker's create conflicts");

        // Two stores holding version 1's image send the same whole-item put: the second is recognised by its record.
        DynamoLedgerStore once = compact();
        DynamoLedgerStore again = compact();
        once.find(new JobKey("acme", "job-c6")).orElseThrow();
        again.find(new JobKey("acme", "job-c6")).orElseThrow();
        LedgerRecord ending = succeeded(created, now.plusSeconds(1));
        LedgerRecord written = once.write(ending);
        assertEquals(written, again.write(ending));
        assertThrows(LedgerConflict.class, () -> compact().write(created.withLease("w2", created.leaseUntil())),
                "a different write on version 1 is a conflict");
        assertEquals(written, attributes().find(new JobKey("acme", "job-c6")).orElseThrow());
    }

    @Test
    void anAttributeANewerReleaseAddedSurvivesACompactWrite() {
        Instant now = now();
        LedgerRecord running = started("job-c7", now, "w1").withVersion(1);
        Map<String, AttributeValue> item = withKey(DynamoLedgerStore.encodeCompact(running), "job-c7");
        item.put("addedLater", AttributeValue.fromS("keep me"));
        dynamo.putItem(b -> b.tableName(names.ledgerTable()).item(item));
        DynamoLedgerStore ledger = compact();
        LedgerRecord read = ledger.find(new JobKey("acme", "job-c7")).orElseThrow();
        assertEquals(running, read);
        ledger.write(succeeded(read, now.plusSeconds(1)));
        assertEquals("keep me", stored("job-c7").get("addedLater").s(), "updated, not replaced");
        assertEquals(JobState.SUCCEEDED, attributes().find(new JobKey("acme", "job-c7")).orElseThrow().state());
    }
}

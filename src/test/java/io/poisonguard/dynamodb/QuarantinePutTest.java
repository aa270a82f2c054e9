package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.admission.Diagnostics;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.testing.RecordingDynamo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The quarantine record's first put decides who alerts and counts the quarantine. The SDK sends a put again when its
 * answer was lost; that second one fails its condition on the record the first one wrote, and was taken for another
 * copy's quarantine: no alert, no count, for a quarantine that happened (only the review cadence's escalation, hours
 * later, would surface it).
 */
class QuarantinePutTest {
    static RecordingDynamo dynamo;

    @BeforeAll
    static void tables() {
        dynamo = RecordingDynamo.onFreshTables("qp");
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static QuarantineRecord record(String jobId, String messageId, Instant at) {
        return record(jobId, messageId, at, at.plus(Duration.ofDays(14)));
    }

    private static QuarantineRecord record(String jobId, String messageId, Instant at, Instant expiresAt) {
        return new QuarantineRecord(jobId, "acme", "permit-report", 1, FailureClass.PERMANENT, "PERMANENT limit reached", 1,
                Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), at, at, at,
                expiresAt, messageId, QuarantineStatus.QUARANTINED, List.of(), null, DeadLetterCopy.sent("d-1"), null);
    }

    /** Writes a quarantine record of {@code jobId} (tenant acme) at {@code at} and reads it back, as a reopen reads it. */
    private static java.util.Optional<QuarantineRecord> quarantinedAt(DynamoQuarantineStore store, String jobId, Instant at) {
        assertTrue(store.putIfAbsent(record(jobId, "m-1", at)));
        return store.find(io.poisonguard.ledger.JobKey.of("acme", jobId));
    }

    @Test
    void aRecordAReadTakesForExpiredIsReplacedByANewQuarantineInTheSameSecond() {
        Instant expiry = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).plus(Duration.ofDays(1));
        Instant inThatSecond = expiry.plusMillis(400);
        DynamoQuarantineStore store = new DynamoQuarantineStore(dynamo.client(), dynamo.names().quarantineTable(),
                Clock.fixed(inThatSecond, java.time.ZoneOffset.UTC));
        assertTrue(store.putIfAbsent(record("job-x", "m-old", expiry.minus(Duration.ofDays(14)), expiry)));
        assertTrue(store.find(io.poisonguard.ledger.JobKey.of("acme", "job-x")).isEmpty(), "a read takes the record for gone");

        assertTrue(store.putIfAbsent(record("job-x", "m-new", inThatSecond)),
                "the new quarantine's record (and so its alert) is not lost to the one a read no longer sees");
    }

    @Test
    void aPutSentAgainAfterItLandedIsStillThePutsOwnAndAnotherCopysIsNot() {
        DynamoQuarantineStore store = new DynamoQuarantineStore(dynamo.client(), dynamo.names().quarantineTable(), Clock.systemUTC());
        Instant now = Instant.now();
        QuarantineRecord first = record("job-q", "m-1", now);

        assertTrue(store.putIfAbsent(first));
        assertTrue(store.putIfAbsent(first), "the same put sent again (the SDK's retry after a lost answer) is still this put's");
        assertFalse(store.putIfAbsent(record("job-q", "m-2", now.plusMillis(5))), "another copy's quarantine of the same generation is not");
    }

    /**
     * A reopen replaces the record it read, whatever that record's status (the replay that concluded the job lost writes
     * the ledger first and the record after), and only that one: of two copies reopening at once, the second writes nothing.
     * The conclusion's own record write, landing after the reopen, changes nothing either.
     */
    @Test
    void aReopenReplacesTheRecordItReadOnceAndALateConclusionDoesNotUndoIt() {
        DynamoQuarantineStore store = new DynamoQuarantineStore(dynamo.client(), dynamo.names().quarantineTable(), Clock.systemUTC());
        io.poisonguard.ledger.JobKey key = io.poisonguard.ledger.JobKey.of("acme", "job-r");
        Instant then = Instant.now().minus(Duration.ofDays(3));
        java.util.Optional<QuarantineRecord> read = quarantinedAt(store, "job-r", then);

        Instant now = Instant.now();
        assertTrue(store.reopen(record("job-r", "m-found", now), read), "still QUARANTINED (the conclusion's record write not landed yet)");
        assertFalse(store.reopen(record("job-r", "m-found-too", now.plusMillis(3)), read), "a second copy's reopen of the same record");
        assertFalse(store.concludeUnrecoverable(key, then), "the conclusion's late write to the record it judged");
        QuarantineRecord after = store.find(key).orElseThrow();
        org.junit.jupiter.api.Assertions.assertEquals("m-found", after.sourceMessageId());
        org.junit.jupiter.api.Assertions.assertEquals(QuarantineStatus.QUARANTINED, after.status());

        assertTrue(store.concludeUnrecoverable(key, now), "the record a conclusion judged is concluded");
        org.junit.jupiter.api.Assertions.assertEquals(QuarantineStatus.UNRECOVERABLE, store.find(key).orElseThrow().status());
    }

    /**
     * A reopen replaces the record it read whatever its status (one a replay left REPLAYING before it concluded the job lost,
     * its own record write not landed: a reopen that refused it would be tried again by every copy for ever), but not one
     * replaced since it was read.
     */
    @Test
    void aReopenReplacesTheRecordItReadWhateverItsStatusButNotOneReplacedSince() {
        DynamoQuarantineStore store = new DynamoQuarantineStore(dynamo.client(), dynamo.names().quarantineTable(), Clock.systemUTC());
        io.poisonguard.ledger.JobKey key = io.poisonguard.ledger.JobKey.of("acme", "job-moved");
        Instant then = Instant.now().minus(Duration.ofDays(3));
        java.util.Optional<QuarantineRecord> read = quarantinedAt(store, "job-moved", then);
        assertTrue(store.updateStatus(key, QuarantineStatus.REPLAYING, java.util.Optional.empty()));

        assertTrue(store.reopen(record("job-moved", "m-found", Instant.now()), read));
        org.junit.jupiter.api.Assertions.assertEquals(QuarantineStatus.QUARANTINED, store.find(key).orElseThrow().status());
        assertFalse(store.reopen(record("job-moved", "m-found-later", Instant.now().plusMillis(7)), read),
                "the record read was replaced since");
    }
}

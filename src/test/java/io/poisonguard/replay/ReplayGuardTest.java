package io.poisonguard.replay;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.Triage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The replay guard's view of a job whose ledger and quarantine record disagree about the generation: a replayed job that
 * failed again is QUARANTINED in the ledger at its new generation before its quarantine (payload kept, dead-letter copy
 * sent, record written) is complete. Until then its only copy is on the main queue, so a replay must wait, not go on to
 * find nothing and call the job unrecoverable.
 */
class ReplayGuardTest {
    static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");
    static final Duration SETTLE = Duration.ofMinutes(2);
    static final Duration RETENTION = Duration.ofDays(14);
    static final Duration QUEUE_RETENTION = Duration.ofDays(4);

    private static LedgerRecord quarantined(int generation, Instant at) {
        return LedgerRecord.fresh("job-7", "tenant-a", "permit-report", generation, at).moveTo(JobState.QUARANTINED, at)
                .withQuarantine(FailureClass.PERMANENT, "boom");
    }

    private static QuarantineRecord record(LedgerRecord of, Instant at) {
        return QuarantineRecord.of(of, new Diagnostics(10, "utf-8", null, null, 3, 0), "m-1", at, RETENTION, List.of(),
                DeadLetterCopy.sent("dlq-1"), Triage.owned("operations", true));
    }

    @Test
    void aJobQuarantinedAgainWhoseNewRecordIsNotWrittenYetIsNotReplayedWhateverTheOldRecordsAge() {
        Instant firstQuarantine = NOW.minus(Duration.ofHours(1));
        QuarantineRecord old = record(quarantined(1, firstQuarantine), firstQuarantine);
        LedgerRecord again = quarantined(2, NOW.minusSeconds(1));

        Optional<ActionOutcome> verdict = ReplayGuard.check("job-7", Optional.of(again), Optional.of(old), Optional.empty(), NOW,
                SETTLE, RETENTION, QUEUE_RETENTION);

        ActionOutcome.Refused refused = assertInstanceOf(ActionOutcome.Refused.class, verdict.orElseThrow(
                () -> new AssertionError("a replay went ahead while generation 2's quarantine was still completing")));
        assertEquals(Refusal.CONFLICT, refused.refusal());
        assertTrue(refused.detail().contains("generation 2"), refused.detail());
    }

    @Test
    void aJobWhoseRecordIsOfItsGenerationMayBeReplayed() {
        Instant at = NOW.minus(Duration.ofHours(1));
        LedgerRecord l = quarantined(2, at);

        assertEquals(Optional.empty(), ReplayGuard.check("job-7", Optional.of(l), Optional.of(record(l, at)), Optional.empty(), NOW,
                SETTLE, RETENTION, QUEUE_RETENTION));
    }

    /**
     * The refusal has an end: no copy stays on the main queue past its retention, so a re-quarantine whose record was never
     * written (its copy lost) is not refused for ever; the replay then looks in the vault and the DLQ as usual.
     */
    @Test
    void aRecordThatNeverCameIsNoLongerWaitedForPastTheMainQueuesRetention() {
        Instant firstQuarantine = NOW.minus(Duration.ofDays(10));
        QuarantineRecord old = record(quarantined(1, firstQuarantine), firstQuarantine);
        LedgerRecord again = quarantined(2, NOW.minus(QUEUE_RETENTION).minusSeconds(1));

        assertEquals(Optional.empty(), ReplayGuard.check("job-7", Optional.of(again), Optional.of(old), Optional.empty(), NOW,
                SETTLE, RETENTION, QUEUE_RETENTION));
    }

    /** A job concluded from a replay stuck REPLAYING (no class left on it) is quarantined again with one. */
    @Test
    void aJobConcludedFromAStuckReplayIsQuarantinedAgainWithAClass() {
        LedgerRecord stuck = quarantined(1, NOW.minus(Duration.ofDays(20))).replayed(NOW.minus(Duration.ofDays(20)))
                .moveTo(JobState.UNRECOVERABLE, NOW.minus(Duration.ofDays(1)));
        assertEquals(null, stuck.quarantineClass());

        LedgerRecord back = stuck.reopened(NOW, FailureClass.REDRIVEN);

        assertEquals(JobState.QUARANTINED, back.state());
        assertEquals(FailureClass.REDRIVEN, back.quarantineClass());
        assertTrue(back.quarantineReason().contains("turned up"), back.quarantineReason());
        assertEquals(FailureClass.PERMANENT, quarantined(1, NOW).moveTo(JobState.UNRECOVERABLE, NOW).reopened(NOW, FailureClass.REDRIVEN)
                .quarantineClass(), "a class it has stays");
    }
}

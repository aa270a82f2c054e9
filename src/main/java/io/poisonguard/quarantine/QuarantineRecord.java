package io.poisonguard.quarantine;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.LedgerRecord;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The operator's view of a quarantined job: metadata and bounded diagnostics, never the payload
 * (invariant 8). {@code deadLetter} says whether the dead-letter queue holds its copy. {@code failures} counts failures per class, so CRASH (attributable, it ran alone)
 * and CRASH_AMBIGUOUS (it crashed among other jobs) stand apart. The payload lives in the dead-letter queue for as long as its retention allows;
 * {@code expiresAt} is this record's TTL. {@code receiveCount} is set only for a job the dead-letter
 * intake adopted (class REDRIVEN): SQS's ApproximateReceiveCount of the copy it found in the DLQ.
 */
public record QuarantineRecord(
        String jobId,
        String tenant,
        String jobType,
        int generation,
        FailureClass failureClass,
        String reason,
        int attempts,
        Map<FailureClass, Integer> failures,
        Diagnostics diagnostics,
        List<AttemptEntry> history,
        Instant firstSeen,
        Instant lastSeen,
        Instant quarantinedAt,
        Instant expiresAt,
        String sourceMessageId,
        QuarantineStatus status,
        List<ReplayEntry> replays,
        Integer receiveCount,
        DeadLetterCopy deadLetter,
        Triage triage) {

    public QuarantineRecord {
        history = history == null ? List.of() : List.copyOf(history);
        failures = failures == null ? Map.of() : Map.copyOf(failures);
        replays = replays == null ? List.of() : List.copyOf(replays);
        status = status == null ? QuarantineStatus.QUARANTINED : status;
        // Records written before the dead-letter state was kept were only ever written after a sent copy.
        deadLetter = deadLetter == null ? DeadLetterCopy.sent(null) : deadLetter;
        // Records written before owners existed have none.
        triage = triage == null ? Triage.owned(null, true) : triage;
    }

    /** Where the record stands for the people handling it. */
    public TriageState triageState() {
        return triage.state(status);
    }

    /**
     * The record of a job that has just been quarantined; {@code earlierReplays} carries the replay
     * history of a previous generation's record, so a failed replay does not erase it; {@code deadLetter}
     * names what became of the dead-letter copy.
     */
    public static QuarantineRecord of(LedgerRecord ledger, Diagnostics diagnostics, String sourceMessageId, Instant now,
                                      java.time.Duration retention, List<ReplayEntry> earlierReplays, DeadLetterCopy deadLetter, Triage triage) {
        return new QuarantineRecord(ledger.jobId(), ledger.tenant(), ledger.jobType(), ledger.generation(),
                ledger.quarantineClass(), ledger.quarantineReason(), ledger.attempt(), ledger.failures(), diagnostics, ledger.history(),
                ledger.firstSeen(), ledger.updatedAt(), now, now.plus(retention), sourceMessageId, QuarantineStatus.QUARANTINED,
                earlierReplays, null, deadLetter, triage);
    }

    /** The record with the receive count of the dead-letter copy the intake adopted. */
    public QuarantineRecord withReceiveCount(int count) {
        return new QuarantineRecord(jobId, tenant, jobType, generation, failureClass, reason, attempts, failures, diagnostics, history,
                firstSeen, lastSeen, quarantinedAt, expiresAt, sourceMessageId, status, replays, count, deadLetter, triage);
    }
}

package io.poisonguard.quarantine;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Durable home of quarantine records. Reads treat a record past its TTL as gone. */
public interface QuarantineStore {

    /** Stores the record unless one for the same job and generation exists; returns whether it wrote. */
    boolean putIfAbsent(QuarantineRecord record);

    /**
     * Stores {@code fresh}, the record of a job quarantined again because its payload, concluded gone, turned up: in place
     * of {@code replaced}, the record read just before (matched by its generation and quarantine time, whatever its
     * status: the ledger, UNRECOVERABLE throughout, keeps operators' replays and resolves away), or where no live record is. Returns whether this call wrote it: of several copies
     * doing this at once only the first, which alerts.
     */
    boolean reopen(QuarantineRecord fresh, Optional<QuarantineRecord> replaced);

    /**
     * Whether the record of a job the ledger still says is UNRECOVERABLE ({@code gone}) is a reopen's already: written
     * after the conclusion (a reopen writes its record first and moves the ledger after, and dates it past the conclusion,
     * see {@link #reopenedAt}). The concluded record itself, and one the conclusion did not get to mark, are older than
     * the conclusion: a replay concludes only once its record has settled, or once it has passed its retention.
     */
    static boolean reopenWritten(io.poisonguard.ledger.LedgerRecord gone, Optional<QuarantineRecord> latest) {
        return latest.filter(r -> r.status() == QuarantineStatus.QUARANTINED && r.quarantinedAt() != null && gone.updatedAt() != null
                && r.quarantinedAt().toEpochMilli() > gone.updatedAt().toEpochMilli()).isPresent();
    }

    /** What a reopen's record step did ({@link #reopenRecord}). */
    enum ReopenStep {
        /** This call wrote the reopen's record: the one alert of the reopen is its caller's to send. */
        WRITTEN,
        /** A reopen's record was there already (another copy's, or a worker's stopped before it moved the ledger). */
        WRITTEN_BEFORE,
        /** The record read was replaced by something other than a reopen before the put: the copy is decided again. */
        CHANGED
    }

    /**
     * The record step of a reopen of {@code gone}, a job the ledger says is UNRECOVERABLE whose payload is kept again, for
     * both ways a payload turns up (a copy on the main queue, an orphan in the DLQ): read the record, write nothing if it is a
     * reopen's already, else put {@code fresh}'s record, dated {@link #reopenedAt} and built from the one read (its triage
     * and replays carry over), in place of that one. The ledger moves only after this step, so while it says UNRECOVERABLE
     * no replay or resolve acts on the job.
     */
    default ReopenStep reopenRecord(io.poisonguard.ledger.LedgerRecord gone, Instant now,
                                    java.util.function.BiFunction<Instant, Optional<QuarantineRecord>, QuarantineRecord> fresh) {
        JobKey key = JobKey.of(gone);
        Optional<QuarantineRecord> latest = find(key);
        if (reopenWritten(gone, latest)) {
            return ReopenStep.WRITTEN_BEFORE;
        }
        if (reopen(fresh.apply(reopenedAt(gone, now), latest), latest)) {
            return ReopenStep.WRITTEN;
        }
        return reopenWritten(gone, find(key)) ? ReopenStep.WRITTEN_BEFORE : ReopenStep.CHANGED;
    }

    /** When a reopen's record says it was quarantined: now, and past the conclusion whichever clock wrote that. */
    static Instant reopenedAt(io.poisonguard.ledger.LedgerRecord gone, Instant now) {
        Instant afterConclusion = gone.updatedAt() == null ? now
                : gone.updatedAt().truncatedTo(java.time.temporal.ChronoUnit.MILLIS).plusMillis(1);
        return now.isAfter(afterConclusion) ? now : afterConclusion;
    }

    /**
     * Marks the record UNRECOVERABLE, only while it is still the one quarantined at {@code quarantinedAt}: a reopen may
     * have replaced it since it was read. False when it was replaced or is gone.
     */
    boolean concludeUnrecoverable(JobKey key, Instant quarantinedAt);

    Optional<QuarantineRecord> find(JobKey key);

    /** The keys of the live records for {@code jobId}: one per tenant that quarantined a job with this id. */
    List<JobKey> keysOf(String jobId, Instant now);

    /** Live records of one failure class, oldest first, at most {@code limit}. */
    List<QuarantineRecord> byClass(FailureClass failureClass, Instant now, int limit);

    /** A page of live records matching the query. */
    QuarantinePage list(QuarantineQuery query, Instant now);

    /**
     * Moves the record to {@code status}, appending {@code replay} to its replay history when given; false when there is
     * no record to move (it passed its TTL, while the ledger item of a quarantined job never expires, or it is not
     * written yet).
     */
    boolean updateStatus(JobKey key, QuarantineStatus status, Optional<ReplayEntry> replay);

    /** Sets the outcome of the replay of {@code generation} and the record's status; nothing when there is no record. */
    void recordReplayOutcome(JobKey key, int generation, QuarantineStatus status, String outcome);

    /** Marks a waiting record acknowledged; false when someone acknowledged it first or it no longer waits. */
    boolean acknowledge(JobKey key, String by, Instant at);

    /** Assigns the record to {@code assignee} (null clears it). */
    void assign(JobKey key, String assignee);

    /** Appends a note (already scrubbed); false when the record holds {@link Triage#MAX_NOTES} notes. */
    boolean addNote(JobKey key, Triage.Note note);

    /** Records that review stage {@code stage} was escalated; false when it already was (by this or another instance). */
    boolean markEscalated(JobKey key, String stage);

    /**
     * Live records of one class still waiting (status QUARANTINED) with a review stage that may be due, oldest first: for
     * each group in {@code acknowledge}, those of its owners neither acknowledged nor escalated for acknowledgement,
     * quarantined at or before its time; for each group in {@code resolve}, those of its owners not escalated for
     * resolution, quarantined at or before its time; at most {@code limit} of each read. Records with nothing to escalate
     * now (both stages escalated; or the first acknowledged or escalated and the second not due yet; or of an owner whose
     * deadline has not passed) are left out: however many there are they must not keep newer records from their turn.
     */
    List<QuarantineRecord> waitingSince(FailureClass failureClass, List<Due> acknowledge, List<Due> resolve, Instant now, int limit);

    /**
     * The records of some owners that fall due for a review stage when quarantined at or before {@code before}: those of
     * the owners named, or ({@code allBut}) of every owner but those named, records of no owner included.
     */
    record Due(Instant before, java.util.Set<String> owners, boolean allBut) {
        public Due {
            owners = java.util.Set.copyOf(owners);
        }
    }

    /**
     * The waiting records of one class escalated for acknowledgement and not yet for resolution: their owner and whether
     * acknowledged since (up to {@code max}), for the overdue gauges.
     */
    List<Escalated> partlyEscalated(FailureClass failureClass, Instant now, int max);

    /** The waiting records of one class whose last review stage was escalated: their owner and whether acknowledged (up to {@code max}). */
    List<Escalated> fullyEscalated(FailureClass failureClass, Instant now, int max);

    /** A waiting record escalated (fully or for acknowledgement only), as the overdue gauges count it. */
    record Escalated(String owner, boolean acknowledged) {
    }

    /**
     * How many jobs of the class wait in quarantine now (QUARANTINED, not expired), counted up to {@code max}, and when the
     * oldest was quarantined: for the gauges, so it reads past records of the class that are no longer waiting, however many.
     */
    Waiting waiting(FailureClass failureClass, Instant now, int max);

    /** Jobs of one class waiting in quarantine: how many, and the oldest's quarantine time (empty when none waits). */
    record Waiting(long count, java.util.Optional<Instant> oldest) {
    }
}

package io.poisonguard.ledger;

import io.poisonguard.failure.FailureClass;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * A job's ledger item: its identity, state, attempt count, failures per class, the lease of the
 * running attempt and a bounded history. {@code version} guards every write (optimistic
 * concurrency), so two workers can never both move the same job. {@code effects} names each effect
 * the job has performed (a completion notice, say) with the attempt that performed it: recorded in the
 * same write that ends that attempt, kept across retries and replays, so no later attempt repeats it.
 */
public record LedgerRecord(
        String jobId,
        String tenant,
        String jobType,
        JobState state,
        int generation,
        int attempt,
        Map<FailureClass, Integer> failures,
        String leaseOwner,
        Instant leaseUntil,
        List<AttemptEntry> history,
        Instant firstSeen,
        Instant updatedAt,
        FailureClass quarantineClass,
        String quarantineReason,
        long version,
        Instant expiresAt,
        Map<String, Integer> effects) {

    public LedgerRecord {
        effects = effects == null || effects.isEmpty() ? Map.of() : Map.copyOf(effects);
        failures = failures == null || failures.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(failures));
        history = history == null ? List.of() : List.copyOf(history);
    }

    public static LedgerRecord fresh(String jobId, String tenant, String jobType, int generation, Instant now) {
        return new LedgerRecord(jobId, tenant, jobType, null, generation, 0, Map.of(), null, null, List.of(), now, now, null, null, 0, null, Map.of());
    }

    public boolean isNew() {
        return state == null;
    }

    public int failuresOf(FailureClass c) {
        return failures.getOrDefault(c, 0);
    }

    public boolean leaseHeldAt(Instant now) {
        return state == JobState.ACTIVE && leaseUntil != null && leaseUntil.isAfter(now);
    }

    /**
     * A suspect: its last attempt never finished (the lease ran out, or a crash is already recorded as
     * its newest entry). Suspects run alone, so a crash of theirs can be attributed.
     */
    public boolean suspectAt(Instant now) {
        AttemptEntry last = currentEntry();
        boolean leaseRanOut = state == JobState.ACTIVE && !leaseHeldAt(now);
        return leaseRanOut || (last != null && last.outcome() == AttemptOutcome.CRASHED);
    }

    /** The history entry of the current attempt, if it is the newest one. */
    public AttemptEntry currentEntry() {
        return history.isEmpty() ? null : history.get(history.size() - 1);
    }

    /** Moves to {@code target}, refusing transitions the state table does not allow. */
    public LedgerRecord moveTo(JobState target, Instant now) {
        if (state != null && !state.canMoveTo(target)) {
            throw new IllegalStateException("job " + jobId + ": " + state + " -> " + target + " is not allowed");
        }
        return new LedgerRecord(jobId, tenant, jobType, target, generation, attempt, failures, leaseOwner, leaseUntil,
                history, firstSeen, now, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    public LedgerRecord withLease(String owner, Instant until) {
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, owner, until,
                history, firstSeen, updatedAt, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    public LedgerRecord withAttempt(int newAttempt) {
        return new LedgerRecord(jobId, tenant, jobType, state, generation, newAttempt, failures, leaseOwner, leaseUntil,
                history, firstSeen, updatedAt, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    public LedgerRecord withFailureCounted(FailureClass c) {
        Map<FailureClass, Integer> next = new EnumMap<>(FailureClass.class);
        next.putAll(failures);
        next.merge(c, 1, Integer::sum);
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, next, leaseOwner, leaseUntil,
                history, firstSeen, updatedAt, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    /** Appends an entry, keeping only the newest {@code limit} entries. */
    public LedgerRecord withEntry(AttemptEntry entry, int limit) {
        List<AttemptEntry> next = new ArrayList<>(history);
        next.add(entry);
        while (next.size() > limit) {
            next.remove(0);
        }
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, leaseOwner, leaseUntil,
                next, firstSeen, updatedAt, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    /** Replaces the newest entry (the attempt that is ending). */
    public LedgerRecord withCurrentEntry(AttemptEntry entry) {
        if (history.isEmpty()) {
            throw new IllegalStateException("job " + jobId + " has no attempt to end");
        }
        List<AttemptEntry> next = new ArrayList<>(history);
        next.set(next.size() - 1, entry);
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, leaseOwner, leaseUntil,
                next, firstSeen, updatedAt, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    public LedgerRecord withQuarantine(FailureClass c, String reason) {
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, null, null,
                history, firstSeen, updatedAt, c, reason, version, expiresAt, effects);
    }

    /**
     * The same record, marked as looked at {@code now} (a new {@code updatedAt}, so its write changes the version): a
     * suspect turned away by a busy isolation lane leaves this mark, so its returns from the dead-letter queue are not
     * taken for those of a job that never reaches the ledger.
     */
    public LedgerRecord touched(Instant now) {
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, leaseOwner, leaseUntil,
                history, firstSeen, now, quarantineClass, quarantineReason, version, expiresAt, effects);
    }

    public LedgerRecord withExpiry(Instant at) {
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, leaseOwner, leaseUntil,
                history, firstSeen, updatedAt, quarantineClass, quarantineReason, version, at, effects);
    }

    /**
     * An UNRECOVERABLE job whose payload turned up, quarantined again at its generation. One concluded from a replay that
     * never reached a worker (stuck REPLAYING past its record's retention) has no class or reason left: it takes
     * {@code ifNone}.
     */
    public LedgerRecord reopened(Instant now, FailureClass ifNone) {
        LedgerRecord back = moveTo(JobState.QUARANTINED, now);
        return back.quarantineClass() != null ? back
                : back.withQuarantine(ifNone, "its payload, concluded gone, turned up; quarantined again");
    }

    /**
     * Starts a replay: a new generation with a fresh failure budget. The job id, attempt numbering
     * and history carry on, so the replayed attempt is attempt {@code attempt + 1} of the same job.
     */
    public LedgerRecord replayed(Instant now) {
        LedgerRecord moved = moveTo(JobState.REPLAYING, now);
        return new LedgerRecord(jobId, tenant, jobType, JobState.REPLAYING, generation + 1, attempt, Map.of(), null, null,
                history, firstSeen, moved.updatedAt(), null, null, version, null, effects);
    }

    /** Whether {@code effectName} was performed by an attempt that recorded its end. */
    public boolean performed(String effectName) {
        return effects.containsKey(effectName);
    }

    /** Records effects an attempt performed (name to attempt number); an effect recorded before keeps its attempt. */
    public LedgerRecord withEffects(Map<String, Integer> performed) {
        if (performed.isEmpty()) {
            return this;
        }
        Map<String, Integer> next = new java.util.HashMap<>(performed);
        next.putAll(effects);
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, leaseOwner, leaseUntil,
                history, firstSeen, updatedAt, quarantineClass, quarantineReason, version, expiresAt, next);
    }

    /** The record as the store holds it after a successful write. */
    public LedgerRecord withVersion(long v) {
        return new LedgerRecord(jobId, tenant, jobType, state, generation, attempt, failures, leaseOwner, leaseUntil,
                history, firstSeen, updatedAt, quarantineClass, quarantineReason, v, expiresAt, effects);
    }
}

package io.poisonguard.systemic;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.SequencedMap;
import java.util.SequencedSet;
import java.util.Set;

/**
 * The pure core of the systemic-failure guard. It watches attempt outcomes and quarantines; it trips
 * when {@code sameSignature} distinct jobs fail in a row with one {@link Signature}, or when more than
 * {@code maxQuarantines} quarantines fall within {@code window}. While tripped every failure is held
 * (charged to no job), consumption stops, and after each {@code probeInterval} one job goes through
 * alone: its success resumes consumption. Time is passed in; not thread-safe (the caller serializes).
 *
 * <p>"In a row" is counted per job type. A worker runs several handlers, and a bad deploy usually breaks one
 * of them: the other types' successes say nothing about it, so they do not break its row. A row is kept per
 * signature, with the job types whose failures made it; a success of one of those types, or a failure of one
 * of them with another signature, breaks it. Failures of several types with one signature (a setting every
 * handler reads) make one row.
 */
public final class SystemicWatch {
    /** Job ids kept as a sample in the trip. */
    static final int SAMPLE = 5;

    /** Rows kept at most; past it the row extended longest ago is dropped (a signature seen once and never again). */
    static final int MAX_ROWS = 64;

    /** What the poller may do while the watch is in its current state. */
    public enum Admit {
        /** Not tripped. */
        OPEN,
        /** Tripped, and a probe is due: one job, alone. */
        PROBE,
        /** Tripped; wait for the next probe or an operator. */
        PAUSED
    }

    /**
     * Why the watch tripped: the signature (null for a quarantine-rate trip), a sentence, sample job ids, and the job types
     * whose failures made the row (sorted; empty for a quarantine-rate trip, which is no type's).
     */
    public record Trip(Signature signature, String cause, List<String> sampleJobIds, Instant at, List<String> jobTypes) {
        public Trip {
            sampleJobIds = List.copyOf(sampleJobIds);
            jobTypes = List.copyOf(jobTypes);
        }

        /** A trip that names no job type. */
        public Trip(Signature signature, String cause, List<String> sampleJobIds, Instant at) {
            this(signature, cause, sampleJobIds, at, List.of());
        }
    }

    /** The ruling on one failure: whether it is held (not charged), and the trip it caused, if it caused one. */
    public record Ruling(boolean hold, Optional<Trip> tripped) {
        static final Ruling CHARGE = new Ruling(false, Optional.empty());
        static final Ruling HOLD = new Ruling(true, Optional.empty());
    }

    private final int sameSignature;
    private final int maxQuarantines;
    private final Duration window;
    private final Duration probeInterval;

    /** The rows in progress by signature, the row extended most recently last. */
    private final SequencedMap<Signature, Row> rows = new LinkedHashMap<>();
    private final Deque<Instant> quarantines = new ArrayDeque<>();
    private Trip trip;
    private Instant nextProbeAt;

    public SystemicWatch(int sameSignature, int maxQuarantines, Duration window, Duration probeInterval) {
        if (sameSignature < 2) {
            throw new IllegalArgumentException("sameSignature must be at least 2, was " + sameSignature);
        }
        if (maxQuarantines < 1) {
            throw new IllegalArgumentException("maxQuarantines must be at least 1, was " + maxQuarantines);
        }
        if (window.isNegative() || window.isZero() || probeInterval.isNegative() || probeInterval.isZero()) {
            throw new IllegalArgumentException("window and probeInterval must be positive");
        }
        this.sameSignature = sameSignature;
        this.maxQuarantines = maxQuarantines;
        this.window = window;
        this.probeInterval = probeInterval;
    }

    /** The trip in force, if any. */
    public Optional<Trip> trip() {
        return Optional.ofNullable(trip);
    }

    public Admit admit(Instant now) {
        if (trip == null) {
            return Admit.OPEN;
        }
        return now.isBefore(nextProbeAt) ? Admit.PAUSED : Admit.PROBE;
    }

    /** An attempt of {@code jobId}, a job of type {@code jobType}, failed with {@code signature}. */
    public Ruling failed(Signature signature, String jobType, String jobId, Instant now) {
        if (trip != null) {
            if (!now.isBefore(nextProbeAt)) {
                // The probe failed too: wait a whole interval before the next one.
                nextProbeAt = now.plus(probeInterval);
            }
            return Ruling.HOLD;
        }
        String type = typeOf(jobType);
        Row row = rows.remove(signature);
        // This type now fails another way: the rows it was in are broken (an item's own fault, not the system's).
        rows.values().removeIf(r -> r.jobTypes.contains(type));
        if (row == null) {
            row = new Row();
        }
        row.jobs.add(jobId);
        row.jobTypes.add(type);
        rows.putLast(signature, row);
        if (rows.size() > MAX_ROWS) {
            rows.pollFirstEntry();
        }
        if (row.jobs.size() >= sameSignature) {
            List<String> sample = row.jobs.stream().skip(Math.max(0, row.jobs.size() - SAMPLE)).toList();
            return new Ruling(true, Optional.of(trip(new Trip(signature,
                    row.jobs.size() + " distinct jobs failed in a row with the same signature", sample, now,
                    row.jobTypes.stream().sorted().toList()))));
        }
        return Ruling.CHARGE;
    }

    /**
     * A job is about to be quarantined. Past the quarantine rate the watch trips; a quarantine that
     * can be held (an attempt's failure) then is, one decided at intake (admission) goes ahead.
     */
    public Ruling quarantining(String jobId, Instant now) {
        if (trip != null) {
            if (!now.isBefore(nextProbeAt)) {
                // The probe was quarantined (at intake: it failed its pre-flight or its crash limit): a failed probe, or
                // every next job would go through as the next probe and a backlog would drain into quarantine.
                nextProbeAt = now.plus(probeInterval);
            }
            return Ruling.HOLD;
        }
        while (!quarantines.isEmpty() && !quarantines.peekFirst().isAfter(now.minus(window))) {
            quarantines.removeFirst();
        }
        quarantines.addLast(now);
        if (quarantines.size() > maxQuarantines) {
            return new Ruling(true, Optional.of(trip(new Trip(null,
                    quarantines.size() + " quarantines within " + window.toSeconds() + "s (limit " + maxQuarantines + ")",
                    List.of(jobId), now))));
        }
        return Ruling.CHARGE;
    }

    /**
     * An attempt of a job of type {@code jobType} succeeded: the rows that type is in are broken, and a successful probe
     * resumes consumption, whatever its type. (A probe of another type proves nothing about a broken handler, but waiting
     * for one of the tripping type could wait for good: that type's jobs may have stopped coming, as a hostile tenant's
     * five bad ones would. A handler still broken trips the watch again after its next row.)
     */
    public boolean succeeded(String jobType, Instant now) {
        String type = typeOf(jobType);
        rows.values().removeIf(r -> r.jobTypes.contains(type));
        if (trip != null && !now.isBefore(nextProbeAt)) {
            clear();
            return true;
        }
        return false;
    }

    /** An operator says the fault is fixed: resume now. Returns whether the watch was tripped. */
    public boolean resume() {
        boolean was = trip != null;
        clear();
        return was;
    }

    /**
     * An operator resumed consumption on another worker at {@code resumedAt} (that worker's clock): resume here if this
     * watch tripped before then. A trip at or after it is a fault the operator had not seen, and stays. Returns whether
     * it resumed.
     */
    public boolean resumedElsewhere(Instant resumedAt) {
        // The audit trail keeps milliseconds: a trip is compared at that precision, so one in the resume's own millisecond stays.
        if (trip == null || !trip.at().truncatedTo(java.time.temporal.ChronoUnit.MILLIS).isBefore(resumedAt)) {
            return false;
        }
        clear();
        return true;
    }

    private Trip trip(Trip t) {
        trip = t;
        nextProbeAt = t.at().plus(probeInterval);
        rows.clear();
        return t;
    }

    private void clear() {
        trip = null;
        nextProbeAt = null;
        rows.clear();
        quarantines.clear();
    }

    private static String typeOf(String jobType) {
        return jobType == null ? "" : jobType;
    }

    /** One row in progress: the distinct jobs that failed with its signature, oldest first, and their types. */
    private static final class Row {
        final SequencedSet<String> jobs = new LinkedHashSet<>();
        final Set<String> jobTypes = new HashSet<>();
    }
}

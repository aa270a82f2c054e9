package io.poisonguard.systemic;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.SequencedSet;

/**
 * The pure core of the systemic-failure guard. It watches attempt outcomes and quarantines; it trips
 * when {@code sameSignature} distinct jobs fail in a row with one {@link Signature}, or when more than
 * {@code maxQuarantines} quarantines fall within {@code window}. While tripped every failure is held
 * (charged to no job), consumption stops, and after each {@code probeInterval} one job goes through
 * alone: its success resumes consumption. Time is passed in; not thread-safe (the caller serializes).
 */
public final class SystemicWatch {
    /** Job ids kept as a sample in the trip. */
    static final int SAMPLE = 5;

    /** What the poller may do while the watch is in its current state. */
    public enum Admit {
        /** Not tripped. */
        OPEN,
        /** Tripped, and a probe is due: one job, alone. */
        PROBE,
        /** Tripped; wait for the next probe or an operator. */
        PAUSED
    }

    /** Why the watch tripped: the signature (null for a quarantine-rate trip), a sentence, sample job ids. */
    public record Trip(Signature signature, String cause, List<String> sampleJobIds, Instant at) {
        public Trip {
            sampleJobIds = List.copyOf(sampleJobIds);
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

    private Signature streak;
    private final SequencedSet<String> streakJobs = new LinkedHashSet<>();
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

    /** An attempt of {@code jobId} failed with {@code signature}. */
    public Ruling failed(Signature signature, String jobId, Instant now) {
        if (trip != null) {
            if (!now.isBefore(nextProbeAt)) {
                // The probe failed too: wait a whole interval before the next one.
                nextProbeAt = now.plus(probeInterval);
            }
            return Ruling.HOLD;
        }
        if (!signature.equals(streak)) {
            streak = signature;
            streakJobs.clear();
        }
        streakJobs.add(jobId);
        if (streakJobs.size() >= sameSignature) {
            List<String> sample = streakJobs.stream().skip(Math.max(0, streakJobs.size() - SAMPLE)).toList();
            return new Ruling(true, Optional.of(trip(new Trip(signature,
                    streakJobs.size() + " distinct jobs failed in a row with the same signature", sample, now))));
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

    /** An attempt succeeded: the streak is broken, and a successful probe resumes consumption. */
    public boolean succeeded(Instant now) {
        streak = null;
        streakJobs.clear();
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
        streak = null;
        streakJobs.clear();
        return t;
    }

    private void clear() {
        trip = null;
        nextProbeAt = null;
        streak = null;
        streakJobs.clear();
        quarantines.clear();
    }
}

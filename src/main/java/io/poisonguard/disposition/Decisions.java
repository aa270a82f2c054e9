package io.poisonguard.disposition;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.Failure;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Ladder;
import io.poisonguard.ladder.DurationText;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * The pure core: what happens to a job, given its ledger record, what just happened and the time.
 * No I/O here; the orchestrator only makes the returned record durable and acts on it.
 */
public final class Decisions {
    /** Grace added to a live lease before a waiting copy comes back, so it does not arrive a moment early. */
    static final Duration LEASE_MARGIN = Duration.ofSeconds(1);
    /** How early a copy may arrive before its retry delay ends and still run (clocks and SQS are not exact). */
    static final Duration EARLY_TOLERANCE = Duration.ofSeconds(1);
    /**
     * How many times a copy the redrive backstop moved is sent back to the main queue for its ledger to judge. A job whose
     * every receive fails before it reaches the ledger (it kills the worker in pre-flight, say) would otherwise go round for
     * ever, a backstop's worth of receives at a time; one more move makes it REDRIVEN.
     */
    public static final int MAX_DEAD_LETTER_RETURNS = 3;
    /** The longest SQS keeps any message (its MessageRetentionPeriod's maximum), so the longest a dead-letter copy lives. */
    public static final Duration LONGEST_DEAD_LETTER_COPY = Duration.ofDays(14);

    /**
     * The value of a sent-back copy's {@code dead-letter-returns}: how many returns count so far, and the ledger version
     * they were counted at ({@code 2/17}).
     */
    public static String deadLetterReturns(int returns, LedgerRecord current) {
        return returns + "/" + current.version();
    }

    /**
     * The returns that count toward {@link #MAX_DEAD_LETTER_RETURNS}: only those after which the ledger stayed as it was.
     * A copy that reached the ledger in between (an attempt, a hold, a release was written: a long outage's give-backs)
     * starts again from none, so only a job whose receives never reach its ledger runs out of returns.
     */
    public static int countedReturns(java.util.Optional<String> attribute, LedgerRecord current) {
        if (attribute.isEmpty()) {
            return 0;
        }
        String[] parts = attribute.get().strip().split("/", 2);
        try {
            int returns = Math.max(0, Integer.parseInt(parts[0]));
            return parts.length == 2 && Long.parseLong(parts[1]) == current.version() ? returns : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** When a job waiting on its ladder may run again: the end of its last attempt plus the delay chosen then. */
    public static Optional<Instant> notBefore(LedgerRecord current) {
        AttemptEntry last = current.currentEntry();
        if (current.state() != JobState.RETRY_WAIT || last == null || last.endedAt() == null || last.retryDelay() == null) {
            return Optional.empty();
        }
        return Optional.of(last.endedAt().plus(last.retryDelay()));
    }

    private final Policy policy;

    public Decisions(Policy policy) {
        this.policy = policy;
    }

    public Policy policy() {
        return policy;
    }

    /**
     * Decides what to do with a received copy of a job before any handler runs.
     *
     * @param current   the ledger record (a {@link LedgerRecord#fresh} one when the job is new)
     * @param rejection the pre-flight verdict: a reason when admission refused the message
     * @param messageGeneration the generation the copy carries (1 unless it was replayed)
     */
    public Intake intake(LedgerRecord current, Optional<String> rejection, int messageGeneration, Instant now, String worker,
                         RandomGenerator random) {
        return intake(current, rejection, messageGeneration, now, worker, Lane.SHARED, random);
    }

    /**
     * Where an attempt would run in its worker: alone (the isolation lane for suspects) or beside
     * {@code othersInFlight} other jobs.
     */
    public record Lane(boolean isolated, int othersInFlight) {
        /** Unknown company: a crash here is not attributable. */
        public static final Lane SHARED = new Lane(false, 0);
    }

    /** Whether the next attempt of {@code current} must run alone: its last attempt crashed and crashes are attributed. */
    public boolean needsIsolation(LedgerRecord current, Instant now) {
        return policy.attributeCrashes() && !current.isNew() && current.suspectAt(now) && !current.leaseHeldAt(now);
    }

    /** How long an older generation's copy is hidden while a replay of the job is under way, before it is decided again. */
    public static final Duration REPLAY_WAIT = Duration.ofSeconds(30);

    /**
     * As {@link #intake(LedgerRecord, Optional, int, Instant, String, RandomGenerator)}, for an attempt
     * that would run in {@code lane}.
     */
    public Intake intake(LedgerRecord current, Optional<String> rejection, int messageGeneration, Instant now, String worker,
                         Lane lane, RandomGenerator random) {
        // Parked before stale: a parked job's copy (say, one moved back from the DLQ by hand) may be its
        // only payload, so it goes back to the DLQ whatever generation it carries, never to the bin.
        if (current.state() != null && current.state().parked()) {
            return new Intake.AlreadyQuarantined(current);
        }
        if (!current.isNew() && messageGeneration < current.generation()) {
            if (current.state() == JobState.REPLAYING) {
                return new Intake.ReplayUnderWay(current, messageGeneration, REPLAY_WAIT);
            }
            return new Intake.StaleGeneration(current, messageGeneration);
        }
        if (current.state() == JobState.SUCCEEDED) {
            return new Intake.AlreadySucceeded(current);
        }
        if (current.leaseHeldAt(now)) {
            return new Intake.ActiveElsewhere(current, Duration.between(now, current.leaseUntil()).plus(LEASE_MARGIN));
        }
        Optional<Instant> notBefore = notBefore(current);
        if (notBefore.isPresent() && now.isBefore(notBefore.get().minus(EARLY_TOLERANCE))) {
            // A duplicate copy (or one SQS returned early) during the retry delay: the ladder's delay
            // is the job's, not the copy's, so the copy waits out the rest of it.
            return new Intake.NotYet(current, Duration.between(now, notBefore.get()));
        }
        LedgerRecord record = current;
        if (current.state() == JobState.ACTIVE) {
            // The lease ran out with the attempt still open: its worker died or hung (invariant 1
            // is what makes this visible: the attempt was written before the handler started).
            Disposition afterCrash = fail(current, crashFailure(current, "LeaseExpired", "started and never finished"),
                    AttemptOutcome.CRASHED, now, random);
            if (!(afterCrash instanceof Disposition.RetryAfter retry) || !retry.delay().isZero()) {
                return new Intake.Decided(afterCrash);
            }
            record = retry.next();
        }
        int number = record.attempt() + 1;
        LedgerRecord started = record.withAttempt(number)
                .moveTo(JobState.ACTIVE, now)
                .withEntry(AttemptEntry.started(number, record.generation(), now, worker, lane.isolated(), lane.othersInFlight()),
                        policy.historySize());
        if (rejection.isPresent()) {
            return new Intake.Decided(fail(started, new Failure(FailureClass.ADMISSION, "AdmissionRejected", rejection.get()),
                    AttemptOutcome.REJECTED, now, random));
        }
        return new Intake.Run(started.withLease(worker, now.plus(policy.lease())));
    }

    /**
     * Decides what to do with a job's copy found in the DLQ without a quarantine attribute (SQS's redrive
     * backstop or an operator moved it there), given the job's ledger record ({@link LedgerRecord#fresh}
     * when the job was never seen), how often SQS says the copy was received, and the main queue's redrive
     * backstop ({@code maxReceiveCount}): a copy received that often was moved by SQS, one received fewer times by hand.
     */
    public Adoption adopt(LedgerRecord current, int messageGeneration, int receiveCount, int backstop, int returnedBefore, Instant now) {
        JobState state = current.state();
        if (state == JobState.RESOLVED) {
            return new Adoption.Finished(current, "an operator resolved the job");
        }
        if (state == JobState.DROPPED) {
            return new Adoption.Finished(current, "the job's type is disposable and its poison was dropped");
        }
        if (state != null && state.parked()) {
            return new Adoption.AlreadyParked(current);
        }
        if (state == JobState.SUCCEEDED) {
            return new Adoption.Finished(current, "the job already succeeded");
        }
        if (!current.isNew() && messageGeneration < current.generation() && state == JobState.REPLAYING) {
            // The replay may still conclude the job UNRECOVERABLE, and this copy may be its payload: it stays for now.
            return new Adoption.Busy(current);
        }
        if (!current.isNew() && messageGeneration < current.generation()) {
            return new Adoption.Finished(current, "a copy of generation " + messageGeneration + "; the job is at generation "
                    + current.generation());
        }
        if (current.leaseHeldAt(now)) {
            return new Adoption.Busy(current);
        }
        // Received as often as the backstop allows (SQS moved it, not a hand) while the ledger knows the job.
        boolean trackedAndRedriven = !current.isNew() && receiveCount >= backstop;
        if (trackedAndRedriven && returnedBefore < MAX_DEAD_LETTER_RETURNS) {
            // The ledger knows the job and has not parked it, so every counted attempt stayed within its class's limit: the
            // receives were the service's uncounted give-backs. Quarantining it would charge an outage to the backlog.
            return new Adoption.GiveBack(current, "SQS's redrive backstop moved it after " + receiveCount + " receives while its ledger says "
                    + current.state() + " after " + current.attempt() + " attempt(s)");
        }
        String reason = trackedAndRedriven
                ? "moved to the dead-letter queue by SQS's redrive backstop again after being sent back to the main queue "
                        + returnedBefore + " times: its receives do not reach its ledger"
                : "found in the dead-letter queue without a quarantine record after " + receiveCount
                        + " receives (SQS's redrive backstop or moved by hand)";
        return new Adoption.Quarantine(current.moveTo(JobState.QUARANTINED, now).withQuarantine(FailureClass.REDRIVEN, reason));
    }

    /**
     * The disposition after the running attempt succeeded. The record is kept for {@code keepFor}; a replayed job's (its
     * generation above 1) for at least {@link #LONGEST_DEAD_LETTER_COPY}, since copies of its earlier generations may still
     * be in the dead-letter queue, and one moved back must meet the record to be dropped as stale, not run again.
     */
    public Disposition succeeded(LedgerRecord running, Instant now, Duration keepFor) {
        AttemptEntry entry = running.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, now);
        Duration kept = running.generation() > 1 && keepFor.compareTo(LONGEST_DEAD_LETTER_COPY) < 0 ? LONGEST_DEAD_LETTER_COPY : keepFor;
        LedgerRecord next = running.withCurrentEntry(entry)
                .moveTo(JobState.SUCCEEDED, now)
                .withLease(null, null)
                .withExpiry(now.plus(kept));
        return new Disposition.Complete(next);
    }

    /**
     * The class of a crash of {@code running}'s current attempt: the job's own (CRASH) only if it ran
     * alone or attribution is off; among other jobs, any of them may be the cause (CRASH_AMBIGUOUS).
     */
    private Failure crashFailure(LedgerRecord running, String errorType, String what) {
        AttemptEntry crashed = running.currentEntry();
        boolean attributable = !policy.attributeCrashes() || crashed.isolated();
        String detail = "attempt " + running.attempt() + " " + what
                + (attributable ? (crashed.isolated() ? " while running alone" : "")
                : " while " + crashed.othersInFlight() + "+ other jobs were in flight in its worker");
        return new Failure(attributable ? FailureClass.CRASH : FailureClass.CRASH_AMBIGUOUS, errorType, detail);
    }

    /**
     * The disposition after the running attempt's handler threw an error the JVM may not survive
     * (OutOfMemoryError, an internal error): counted as a crash of the job, attributed like one.
     */
    public Disposition crashed(LedgerRecord running, String errorType, Instant now, RandomGenerator random) {
        return fail(running, crashFailure(running, errorType, "ended with " + errorType), AttemptOutcome.CRASHED, now, random);
    }

    /** The disposition after the running attempt ran past its deadline and was interrupted. */
    public Disposition timedOut(LedgerRecord running, Duration deadline, Instant now, RandomGenerator random) {
        Failure f = new Failure(FailureClass.TIMEOUT, "DeadlineExceeded",
                "attempt " + running.attempt() + " ran past its deadline of " + DurationText.human(deadline));
        return fail(running, f, AttemptOutcome.TIMED_OUT, now, random);
    }

    /**
     * The disposition of an attempt given back without blame ({@link AttemptOutcome#ABANDONED} at
     * shutdown, {@link AttemptOutcome#HELD} by the systemic-failure guard): the attempt ends, nothing
     * is counted, and the message comes back after {@code delay}.
     */
    public Disposition released(LedgerRecord running, AttemptOutcome outcome, String why, Duration delay, Instant now) {
        if (outcome != AttemptOutcome.ABANDONED && outcome != AttemptOutcome.HELD) {
            throw new IllegalArgumentException(outcome + " is not a release: only ABANDONED and HELD end an attempt uncounted");
        }
        AttemptEntry ended = running.currentEntry().ended(outcome, null, null, why, now).withRetryDelay(delay);
        LedgerRecord next = running.withCurrentEntry(ended).withLease(null, null).moveTo(JobState.RETRY_WAIT, now);
        return new Disposition.RetryAfter(next, delay);
    }

    /** The disposition after the running attempt failed with {@code failure}. */
    public Disposition failed(LedgerRecord running, Failure failure, Instant now, RandomGenerator random) {
        return fail(running, failure, AttemptOutcome.FAILED, now, random);
    }

    private Disposition fail(LedgerRecord running, Failure failure, AttemptOutcome outcome, Instant now, RandomGenerator random) {
        FailureClass c = failure.failureClass();
        ClassPolicy limits = policy.of(c);
        // Every path here follows a started attempt, so the newest history entry is the one ending.
        AttemptEntry ended = running.currentEntry().ended(outcome, c, failure.errorType(), failure.message(), now);
        LedgerRecord counted = running.withCurrentEntry(ended).withFailureCounted(c).withLease(null, null);
        int count = counted.failuresOf(c);
        boolean budgetLeftInTime = limits.maxElapsed().map(d -> now.isBefore(counted.firstSeen().plus(d))).orElse(false);
        if (count >= limits.maxAttempts() && !budgetLeftInTime) {
            String reason = outcome == AttemptOutcome.REJECTED && limits.maxAttempts() == 1
                    ? "rejected by admission: " + failure.message()
                    : c + " limit reached: " + count + " of " + limits.maxAttempts() + " attempts " + describe(outcome) + lastError(failure);
            return quarantine(counted, c, reason, now);
        }
        Duration delay = limits.ladder().delay(count, random);
        Optional<Duration> cutoff = limits.cutoff();
        if (cutoff.isPresent() && now.plus(delay).isAfter(counted.firstSeen().plus(cutoff.get()))) {
            String reason = c + " cutoff of " + DurationText.human(cutoff.get()) + " reached after " + count + " attempts"
                    + lastError(failure);
            return quarantine(counted, c, reason, now);
        }
        LedgerRecord waiting = counted.withCurrentEntry(counted.currentEntry().withRetryDelay(delay))
                .moveTo(JobState.RETRY_WAIT, now);
        return new Disposition.RetryAfter(waiting, delay);
    }

    private static Disposition quarantine(LedgerRecord record, FailureClass c, String reason, Instant now) {
        LedgerRecord next = record.moveTo(JobState.QUARANTINED, now).withQuarantine(c, reason);
        return new Disposition.Quarantine(next, c, reason);
    }

    private static String describe(AttemptOutcome outcome) {
        return switch (outcome) {
            case CRASHED -> "crashed";
            case REJECTED -> "rejected by admission";
            case TIMED_OUT -> "timed out";
            default -> "failed";
        };
    }

    private static String lastError(Failure failure) {
        return failure.message() == null || failure.message().isEmpty() ? "" : " (last: " + failure.message() + ")";
    }

    /** Caps a ladder delay so the message's visibility never exceeds SQS's 12-hour limit from this receive. */
    public static Duration visibilityFor(Duration delay, Duration sinceReceive) {
        Duration room = Ladder.SQS_MAX_VISIBILITY.minus(sinceReceive);
        if (room.isNegative()) {
            return Duration.ZERO;
        }
        return delay.compareTo(room) > 0 ? room : delay;
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.JobIdentity;
import io.poisonguard.admission.Preflight;
import io.poisonguard.admission.Verdict;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Disposition;
import io.poisonguard.disposition.Intake;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import io.poisonguard.observability.Metrics.Outcome;
import io.poisonguard.tenants.TenantDirectory;
import jakarta.inject.Singleton;
import jakarta.inject.Named;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * The first stage of a received message: pre-flight, the ledger read, a place in the isolation lane,
 * and the intake decision. Copies that must not run (duplicates, parked or active jobs, rejections)
 * are finished here; a copy that runs leaves with a {@link Ticket}: its attempt already durable in
 * the ledger (invariant 1) and its place in the lane held until the ticket is closed.
 */
@Singleton
public class IntakeStage {
    private static final Logger LOG = Logger.getLogger(IntakeStage.class);
    /** Lost races on one ledger item before the copy is left to redeliver. */
    private static final int MAX_CONFLICTS = 5;
    static final String TENANT_MISMATCH = "tenant-mismatch";

    private final LedgerStore ledger;
    private final SourceQueue source;
    private final Quarantiner quarantiner;
    private final Preflight preflight;
    private final Decisions decisions;
    private final Clock clock;
    private final RandomGenerator random;
    private final Metrics metrics;
    private final String worker;
    private final TenantDirectory tenants;
    private final IsolationLane lane;
    /** The jobs this worker holds a copy of, from intake until the copy's outcome is written (its ticket closed). */
    private final java.util.Set<JobKey> inHand = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final OutcomeStage outcomes;
    private final SystemicGuard guard;
    private final LedgerGate ledgerGate;
    private final Duration visibility;
    /**
     * The longest a suspect waits for the jobs in the lane to finish: those running end by their deadline (and stop grace),
     * and the prefetched copies already in the lane run after them.
     */
    private final Duration suspectWait;
    private final boolean legacyKeys;

    public IntakeStage(LedgerStore ledger, SourceQueue source, Quarantiner quarantiner, Preflight preflight, Decisions decisions, Clock clock,
                       RandomGenerator random, Metrics metrics, @Named("worker-id") String worker, TenantDirectory tenants, IsolationLane lane,
                       OutcomeStage outcomes, SystemicGuard guard, LedgerGate ledgerGate, PoisonGuardConfig config) {
        this.ledgerGate = ledgerGate;
        this.ledger = ledger;
        this.source = source;
        this.quarantiner = quarantiner;
        this.preflight = preflight;
        this.decisions = decisions;
        this.clock = clock;
        this.random = random;
        this.metrics = metrics;
        this.worker = worker;
        this.tenants = tenants;
        this.lane = lane;
        this.outcomes = outcomes;
        this.guard = guard;
        this.visibility = config.consumer().visibilityTimeout();
        Duration drain = io.poisonguard.config.Settings.longestDeadline(config.attempt()).plus(config.attempt().stopGrace()).multipliedBy(2);
        this.suspectWait = drain.compareTo(visibility.dividedBy(2)) > 0 ? drain : visibility.dividedBy(2);
        this.legacyKeys = config.ledger().legacyKeys();
    }

    /** A copy cleared to run: its started attempt, what pre-flight admitted, and its place in the lane. */
    record Ticket(LedgerRecord started, Verdict.Admitted admitted, IsolationLane.Slot slot, Runnable release) implements AutoCloseable {
        @Override
        public void close() {
            try {
                slot.close();
            } finally {
                release.run();
            }
        }
    }

    /** Takes a received copy in; a ticket when it is to run now. */
    Optional<Ticket> admit(InboundMessage m) {
        return admit(m, JobProcessor.Turn.NOW);
    }

    /** Takes a received copy in, that will take its handler's slot through {@code turn}; a ticket when it is to run now. */
    Optional<Ticket> admit(InboundMessage m, JobProcessor.Turn turn) {
        metrics.received(Duration.between(m.sentAt(), clock.instant()));
        JobIdentity id = JobIdentity.of(m);
        // The job is its tenant's: another tenant's job with the same id is another job (a copy without a
        // valid tenant is refused at admission, in a scope of its own).
        JobKey key = JobKey.of(m.attribute(WireAttributes.TENANT).orElse(null), id.jobId());
        if (!inHand.add(key)) {
            // Another copy of this job is in this worker's hands (a duplicate in the same receive, or one received while
            // the first runs). Admitted side by side in the same millisecond, both would build the same started attempt,
            // and the second's failed create would look like its own write sent again: it waits, and reads the ledger
            // when it is back.
            source.changeVisibility(m, visibility.dividedBy(2));
            metrics.outcome(Outcome.DEFERRED_ACTIVE_ELSEWHERE, null);
            LOG.debugf("Job %s: another copy of it is in this worker's hands; this one waits %s", id.jobId(), visibility.dividedBy(2));
            return Optional.empty();
        }
        Optional<Ticket> ticket = Optional.empty();
        try {
            ticket = decide(m, id, key, turn);
            return ticket;
        } finally {
            if (ticket.isEmpty()) {
                inHand.remove(key);
            }
        }
    }

    private Optional<Ticket> decide(InboundMessage m, JobIdentity id, JobKey key, JobProcessor.Turn turn) {
        Verdict verdict = preflight.check(m);
        int claimed = m.attribute(WireAttributes.GENERATION).map(IntakeStage::parseGeneration).orElse(1);

        // A first delivery of a first generation almost always meets no ledger record: it goes straight to
        // the conditional create (no read). If a record exists after all, the create fails its condition
        // and the next round reads and decides. Any other copy reads first.
        // While old items keyed by job id alone may exist (ledger.legacy-keys), every copy reads.
        boolean firstDelivery = m.receiveCount() <= 1 && claimed == 1 && !legacyKeys;
        for (int tries = 0; tries < MAX_CONFLICTS; tries++) {
            Optional<LedgerRecord> seen;
            try {
                seen = tries == 0 && firstDelivery ? Optional.empty() : ledger.find(key);
            } catch (StoreUnavailable down) {
                return ledgerDown(m, down, null);
            }
            // A record of this job id kept for another tenant (an item from before keys were scoped by tenant):
            // whose job this copy is cannot be told, so it is neither run nor dropped but quarantined.
            boolean mismatch = seen.filter(r -> !key.owns(r)).isPresent();
            seen = seen.filter(key::owns);
            if (!mismatch && seen.filter(r -> r.state() == JobState.REPLAYING && claimed < r.generation()).isPresent()) {
                // An older generation's copy while a replay is under way waits (Decisions.intake says the same) and takes no
                // lane: it runs nothing, and a suspect's exclusive lane or turn-away mark would stall the worker and move
                // the replay's own ledger record under it.
                waitForReplay(m, id, seen.get(), claimed);
                return Optional.empty();
            }
            boolean alone = seen.map(r -> decisions.needsIsolation(r, clock.instant())).orElse(false);
            // An ordinary copy waits for the lane (behind a suspect) at most half its visibility. A suspect waits for the
            // jobs in the lane to finish, which can take longer than its copy stays hidden: it keeps the copy hidden
            // meanwhile, up to the time those jobs can take (the poller takes no more work while it waits). Given up
            // after half a visibility, it never ran while the jobs in a busy lane outlasted that.
            // Only a suspect that is to start an attempt now waits long: one whose copy is forwarded to the DLQ (a parked
            // job), deleted, or deferred (its retry delay not over, an earlier generation) takes the lane only briefly.
            boolean startsNow = alone && startsNow(seen.get(), claimed, verdict);
            Duration sinceReceive = Duration.between(m.receivedAt(), clock.instant());
            Duration firstWait = visibility.dividedBy(2).minus(sinceReceive);
            Duration maxWait = startsNow ? suspectWait.minus(sinceReceive) : firstWait;
            Optional<IsolationLane.Slot> entered = startsNow
                    ? lane.enterAlone(firstWait, maxWait, visibility.dividedBy(2), () -> keepHidden(m))
                    : lane.enter(alone, maxWait);
            if (entered.isEmpty()) {
                if (alone && !seen.get().state().parked()) {
                    turnedAway(seen.get());
                }
                source.changeVisibility(m, visibility.dividedBy(2));
                metrics.outcome(Outcome.LANE_BUSY, null);
                LOG.infof("Job %s: waited %s for the isolation lane; the copy is given back uncounted", id.jobId(), maxWait);
                return Optional.empty();
            }
            IsolationLane.Slot slot = entered.get();
            boolean handedOff = false;
            LedgerRecord starting = null;
            try {
                // Read again only if taking the lane waited for other jobs: the record may have changed meanwhile.
                Instant now = clock.instant();
                Optional<LedgerRecord> known = slot.waited() ? ledger.findOwn(key) : seen;
                int generation = honoured(claimed, known, id.jobId());
                Optional<String> rejection = mismatch
                        ? Optional.of(TENANT_MISMATCH + ": the ledger keeps this job id for another tenant") : refusal(verdict, generation);
                LedgerRecord current = known.orElseGet(() -> LedgerRecord.fresh(id.jobId(), key.tenant(), recordableJobType(verdict, m), generation, now));
                if (decisions.needsIsolation(current, now) != alone) {
                    continue;
                }
                boolean crashFound = current.state() == JobState.ACTIVE && !current.leaseHeldAt(now);
                Intake intake = decisions.intake(current, rejection, generation, now, worker,
                        new Decisions.Lane(slot.alone(), slot.othersInFlight()), random);
                // A copy that came into a one-job worker's empty lane runs alone only if it has the handler's slot from
                // before its attempt is written until its outcome is: another copy whose write comes back first must not
                // run ahead of it. Taken only for a copy that is to run, and given back if it does not (below).
                if (intake instanceof Intake.Run && slot.alone() && !alone && !turn.claim()) {
                    // The slot is still the previous job's (its end a moment away): one other in flight.
                    intake = decisions.intake(current, rejection, generation, now, worker,
                            new Decisions.Lane(false, Math.max(1, slot.othersInFlight())), random);
                }
                switch (intake) {
                    case Intake.StaleGeneration stale -> {
                        source.delete(m);
                        metrics.outcome(Outcome.DUPLICATE_DROPPED, null);
                        LOG.infof("Job %s: dropped a copy of generation %d (the job is at generation %d)", id.jobId(),
                                stale.messageGeneration(), stale.current().generation());
                    }
                    case Intake.ReplayUnderWay replay -> waitForReplay(m, id, replay.current(), replay.messageGeneration());
                    case Intake.AlreadySucceeded done -> {
                        if (!outcomes.replaySucceededLate(done.current())) {
                            // A replay's success its quarantine record has not heard of yet: the copy waits to tell it.
                            metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
                            return Optional.empty();
                        }
                        source.delete(m);
                        metrics.outcome(Outcome.DUPLICATE_DROPPED, null);
                        LOG.debugf("Job %s already succeeded; dropped a duplicate copy", id.jobId());
                    }
                    case Intake.ActiveElsewhere active -> {
                        source.changeVisibility(m, Decisions.visibilityFor(active.retryIn(), Duration.between(m.receivedAt(), now)));
                        metrics.outcome(Outcome.DEFERRED_ACTIVE_ELSEWHERE, null);
                        LOG.debugf("Job %s is active under %s; this copy waits %s", id.jobId(), active.current().leaseOwner(), active.retryIn());
                    }
                    case Intake.NotYet wait -> {
                        source.changeVisibility(m, Decisions.visibilityFor(wait.retryIn(), Duration.between(m.receivedAt(), now)));
                        metrics.outcome(Outcome.DEFERRED_RETRY_DELAY, null);
                        LOG.debugf("Job %s waits on its ladder; this copy comes back in %s", id.jobId(), wait.retryIn());
                    }
                    case Intake.AlreadyQuarantined q -> quarantiner.completeCopy(q.current(), m, verdict.diagnostics());
                    case Intake.Decided decided -> {
                        LedgerRecord written = ledger.write(decided.disposition().next());
                        countCrash(crashFound, current);
                        if (verdict instanceof Verdict.Rejected r) {
                            metrics.admissionRejected(r.reason());
                        } else if (rejection.isPresent()) {
                            metrics.admissionRejected(rejection.get().startsWith(TENANT_MISMATCH) ? TENANT_MISMATCH : "tenant-not-authorized");
                        }
                        if (decided.disposition() instanceof Disposition.Quarantine) {
                            guard.quarantinedAtIntake(written.jobId());
                        }
                        outcomes.apply(written, decided.disposition(), m, verdict);
                    }
                    case Intake.Run run -> {
                        starting = run.next();
                        LedgerRecord written = ledger.write(run.next());
                        countCrash(crashFound, current);
                        if (alone) {
                            LOG.infof("Job %s: a suspect (its last attempt crashed); attempt %d runs alone in this worker",
                                    id.jobId(), written.attempt());
                        }
                        handedOff = true;
                        return Optional.of(new Ticket(written, (Verdict.Admitted) verdict, slot, () -> inHand.remove(key)));
                    }
                }
                return Optional.empty();
            } catch (LedgerConflict conflict) {
                LOG.debugf("Job %s: %s; deciding again", id.jobId(), conflict.getMessage());
            } catch (StoreUnavailable down) {
                return ledgerDown(m, down, starting);
            } finally {
                if (!handedOff) {
                    turn.unclaim();
                    slot.close();
                }
            }
        }
        metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
        LOG.warnf("Job %s: ledger kept changing under %d attempts to decide; leaving the copy to redeliver", id.jobId(), MAX_CONFLICTS);
        return Optional.empty();
    }

    /**
     * Whether a suspect's copy, as its record stands, would start an attempt now (not merely record its crash and wait on
     * its ladder, be forwarded as a parked job's copy, be deleted or deferred). Asked of the pure decision itself, with a
     * throwaway random: nothing is written or consumed.
     */
    private boolean startsNow(LedgerRecord suspect, int claimed, Verdict verdict) {
        int generation = claimed <= 1 || suspect.generation() >= claimed ? claimed : suspect.generation();
        // A copy pre-flight rejects only records its rejection. (A replayed copy whose tenant lost its authorization is
        // judged by the tenant directory after the lane, a read this does not make: such a rare copy may wait long.)
        Optional<String> rejection = verdict instanceof Verdict.Rejected r ? Optional.of(r.describe()) : Optional.empty();
        return decisions.intake(suspect, rejection, generation, clock.instant(), worker, new Decisions.Lane(true, 0),
                new java.util.SplittableRandom(0)) instanceof Intake.Run;
    }

    /** Keeps a waiting suspect's copy hidden for another visibility timeout; false when SQS did not take the change. */
    private boolean keepHidden(InboundMessage m) {
        try {
            source.changeVisibility(m, visibility);
            return true;
        } catch (RuntimeException e) {
            LOG.debugf("Message %s: could not keep it hidden while it waits for the lane (%s)", m.messageId(), e.getClass().getSimpleName());
            return false;
        }
    }

    /**
     * Marks a suspect turned away by a busy lane on its record (a new {@code updatedAt}; nothing counted, nothing started).
     * Its copy's receives climb while it is turned away, and a copy SQS moved to the DLQ whose record did not change across
     * three returns is taken for a job that dies before reaching the ledger and quarantined: the mark keeps it from that.
     * Best effort: a conflict means the record changed anyway.
     */
    private void turnedAway(LedgerRecord suspect) {
        try {
            ledger.write(suspect.touched(clock.instant()));
        } catch (LedgerConflict | StoreUnavailable e) {
            LOG.debugf("Job %s: marking its turn-away on the record failed (%s)", suspect.jobId(), e.getClass().getSimpleName());
        }
    }

    /**
     * Nothing can be recorded, so nothing may run: the copy goes back uncounted and consumption pauses until the
     * ledger answers again. {@code starting} is the attempt whose start was being written, if any.
     */
    private Optional<Ticket> ledgerDown(InboundMessage m, StoreUnavailable down, LedgerRecord starting) {
        if (!down.ledger()) {
            // Another store (the quarantine records, the tenant directory, the vault) did not answer for this copy: it comes
            // back later; consumption goes on, since the ledger, which every run needs, answers.
            LOG.warnf("Message %s: %s; it is left to redeliver", m.messageId(), down.getMessage());
            source.changeVisibility(m, visibility);
            metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
            return Optional.empty();
        }
        if (starting != null && down.outcomeUnknown()) {
            // Its start may have landed: the copy stays hidden until the gate has settled it.
            ledgerGate.startUnanswered(down, starting, m, source, visibility);
        } else {
            ledgerGate.unavailable(down);
            source.changeVisibility(m, visibility);
        }
        metrics.outcome(Outcome.LEDGER_UNAVAILABLE, null);
        return Optional.empty();
    }

    /** An admitted copy's job type is a configured handler's name; any other is recorded only when it is name-shaped and not secret-shaped. */
    private static String recordableJobType(Verdict verdict, InboundMessage m) {
        return verdict instanceof Verdict.Admitted a ? a.jobType() : Preflight.recordableJobType(m.attribute(WireAttributes.JOB_TYPE));
    }

    private void countCrash(boolean crashFound, LedgerRecord before) {
        if (crashFound) {
            boolean attributable = !decisions.policy().attributeCrashes() || before.currentEntry().isolated();
            metrics.crash(attributable);
        }
    }

    /** Why pre-flight or the tenant directory refuses the copy, if either does. */
    private Optional<String> refusal(Verdict verdict, int generation) {
        return switch (verdict) {
            case Verdict.Rejected r -> Optional.of(r.describe());
            // A replayed copy runs only if its tenant is still authorized now (invariant 10).
            case Verdict.Admitted a when generation > 1 -> tenants.refusal(a.tenant(), a.jobType()).map(why -> "tenant-not-authorized: " + why);
            case Verdict.Admitted a -> Optional.empty();
        };
    }

    /**
     * The generation a copy is handled as. Only a replay makes a generation above 1, and it writes the new
     * generation to the ledger before it sends the copy: a copy claiming a generation the ledger has not
     * reached was not sent by a replay (a sender set the attribute), and is handled as the job's current
     * generation (1 for a job the ledger does not know), so it neither escapes a quarantine nor raises a
     * replay's alerts.
     */
    /** Hides an older generation's copy while the job's replay is under way; it is decided again after that. */
    private void waitForReplay(InboundMessage m, JobIdentity id, LedgerRecord replaying, int generation) {
        source.changeVisibility(m, Decisions.visibilityFor(Decisions.REPLAY_WAIT, Duration.between(m.receivedAt(), clock.instant())));
        metrics.outcome(Outcome.DEFERRED_ACTIVE_ELSEWHERE, null);
        LOG.infof("Job %s: a copy of generation %d waits while the replay of generation %d is under way", id.jobId(), generation,
                replaying.generation());
    }

    private static int honoured(int claimed, Optional<LedgerRecord> known, String jobId) {
        if (claimed <= 1 || known.map(r -> r.generation() >= claimed).orElse(false)) {
            return claimed;
        }
        int current = known.map(LedgerRecord::generation).orElse(1);
        LOG.infof("Job %s: a copy claims generation %d, which no replay made; handled as generation %d", jobId, claimed, current);
        return current;
    }

    private static int parseGeneration(String s) {
        try {
            return Math.max(1, Integer.parseInt(s));
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}

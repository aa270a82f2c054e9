package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.Verdict;
import io.poisonguard.alerts.Alerts;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Disposition;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import io.poisonguard.observability.Metrics.Outcome;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.systemic.Signature;
import jakarta.inject.Singleton;
import jakarta.inject.Named;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * Ends an attempt: decides its disposition (consulting the systemic guard, so the system's faults are
 * held rather than charged to the items), makes it durable in the ledger, and only then acts on the
 * message: delete, hide for the ladder delay, or quarantine.
 */
@Singleton
public class OutcomeStage {
    private static final Logger LOG = Logger.getLogger(OutcomeStage.class);

    private final LedgerStore ledger;
    private final SourceQueue source;
    private final Quarantiner quarantiner;
    private final Decisions decisions;
    private final Clock clock;
    private final RandomGenerator random;
    private final Metrics metrics;
    private final Heartbeat heartbeat;
    private final QuarantineStore quarantine;
    private final Alerts alerts;
    private final SystemicGuard guard;
    private final ConsumptionGate gate;
    private final Duration keepSucceeded;
    private final LedgerGate ledgerGate;
    private final Duration patience;
    private final Duration visibility;
    /** How long the next attempt of a job whose timed-out handler is stuck waits at least: see {@link #notBeside}. */
    private final Duration stuckHold;
    /**
     * How long a job given back at shutdown with its handler still running waits: the stuck hold, or the most the rest
     * of the shutdown may take if longer (the handler runs until the process ends).
     */
    private final Duration abandonedHold;
    private final String worker;

    public OutcomeStage(LedgerStore ledger, SourceQueue source, Quarantiner quarantiner, Decisions decisions, Clock clock, RandomGenerator random,
                        Metrics metrics, Heartbeat heartbeat, QuarantineStore quarantine, Alerts alerts, SystemicGuard guard,
                        LedgerGate ledgerGate, ConsumptionGate gate, PoisonGuardConfig config, @Named("worker-id") String worker) {
        this.gate = gate;
        this.worker = worker;
        this.keepSucceeded = config.retention().succeeded();
        this.ledgerGate = ledgerGate;
        this.patience = config.ledgerGate().outcomePatience();
        this.visibility = config.consumer().visibilityTimeout();
        Duration twice = visibility.multipliedBy(2);
        this.stuckHold = twice.compareTo(io.poisonguard.ladder.Ladder.SQS_MAX_VISIBILITY) > 0 ? io.poisonguard.ladder.Ladder.SQS_MAX_VISIBILITY : twice;
        Duration rest = Poller.restOfShutdown(config.consumer());
        this.abandonedHold = rest.compareTo(stuckHold) > 0 ? rest : stuckHold;
        this.ledger = ledger;
        this.source = source;
        this.quarantiner = quarantiner;
        this.decisions = decisions;
        this.clock = clock;
        this.random = random;
        this.metrics = metrics;
        this.heartbeat = heartbeat;
        this.quarantine = quarantine;
        this.alerts = alerts;
        this.guard = guard;
    }

    /** Ends {@code a}'s attempt. The heartbeat stops first, whatever happens next. */
    void settle(AttemptStage.Attempted a) {
        Running running = a.running();
        running.lock.lock();
        try {
            running.finish();
            heartbeat.unregister(running);
            LedgerRecord record = running.record();
            Instant now = clock.instant();
            Disposition d = decide(record, a.result(), now);
            Optional<LedgerRecord> durable;
            try {
                // The attempt's effects go in the same write that ends it: no write of their own.
                // One whose heartbeat found the job taken over keeps its condition, and so finds the record not its own.
                durable = record(d.next().withEffects(a.performed()), a.message(), running.takenOver() ? null : unfencedUntil(record));
            } catch (LedgerConflict lost) {
                // Our lease ran out and another attempt took the job over: its outcome counts, not ours.
                metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
                LOG.warnf("Job %s attempt %d finished after losing its lease; the newer attempt decides", record.jobId(), record.attempt());
                return;
            }
            if (durable.isEmpty()) {
                metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
                LOG.errorf("Job %s attempt %d: the ledger did not answer for %s; the copy is left to redeliver", record.jobId(),
                        record.attempt(), patience);
                return;
            }
            LedgerRecord written = durable.get();
            log(written, a.result(), d);
            apply(written, d, a.message(), a.admitted());
        } finally {
            running.lock.unlock();
        }
    }

    /**
     * Gives back an attempt whose handler never started (its turn did not come in time, consumption paused,
     * or the worker is stopping after its intake): the attempt ends ABANDONED, counted toward no limit, and the
     * copy is visible again at once. The caller counts the outcome.
     */
    void giveBack(LedgerRecord started, InboundMessage m, String why) {
        Instant now = clock.instant();
        Disposition d = decisions.released(started, AttemptOutcome.ABANDONED, why, Duration.ZERO, now);
        try {
            if (record(d.next(), m, null).isEmpty()) {
                LOG.errorf("Job %s attempt %d: the ledger did not answer for %s; the copy is left to redeliver", started.jobId(),
                        started.attempt(), patience);
                return;
            }
        } catch (LedgerConflict lost) {
            LOG.warnf("Job %s attempt %d was taken over before it started; the newer attempt decides", started.jobId(), started.attempt());
            return;
        }
        LOG.debugf("Job %s attempt %d given back before its handler started (%s)", started.jobId(), started.attempt(), why);
        try {
            source.changeVisibility(m, Duration.ZERO);
        } catch (RuntimeException e) {
            LOG.debugf("Message %s: could not make it visible again (%s); it reappears after its visibility timeout", m.messageId(),
                    e.getClass().getSimpleName());
        }
    }

    /**
     * Until when the ending of {@code running}'s attempt may be written without its version condition: while at least
     * half the lease is left (a renewal every heartbeat keeps a healthy attempt well inside it), so a writer paused or
     * slowed between deciding and writing still writes before any other worker could take the job over.
     */
    private Instant unfencedUntil(LedgerRecord running) {
        return running.leaseUntil() == null ? null : running.leaseUntil().minus(visibility.dividedBy(2));
    }

    /**
     * Makes {@code next} durable. While the ledger does not answer, keeps the message hidden and tries
     * again as the gate's probes allow, for at most {@code ledger-gate.outcome-patience}: the same
     * write, so one that landed without an answer is recognised by its token. Empty when patience ran out.
     */
    private Optional<LedgerRecord> record(LedgerRecord intended, InboundMessage m, Instant unfencedUntil) {
        Instant giveUp = clock.instant().plus(patience);
        LedgerRecord next = intended;
        while (true) {
            try {
                // A success under a lease with a long way to run may share a request with other jobs' endings (see
                // LedgerStore#writeSucceeded); once the record had to be read again, it is written on its version.
                return Optional.of(unfencedUntil != null && next == intended && next.state() == JobState.SUCCEEDED
                        ? ledger.writeSucceeded(next, unfencedUntil) : ledger.write(next));
            } catch (LedgerConflict conflict) {
                // A renewal of our own lease may have landed without an answer (the heartbeat's write
                // during an outage): if the stored record is still this attempt's, write on top of it.
                Optional<LedgerRecord> found;
                try {
                    found = ledger.findOwn(JobKey.of(next));
                } catch (StoreUnavailable down) {
                    // The read that would tell fails too: wait for the ledger, then write and read again.
                    if (!waitedForLedger(down, giveUp, m, intended)) {
                        return Optional.empty();
                    }
                    continue;
                }
                LedgerRecord stored = found.orElseThrow(() -> conflict);
                if (!Ownership.stillRunning(stored, intended, worker) || stored.version() == next.version()) {
                    throw conflict;
                }
                next = intended.withVersion(stored.version());
            } catch (StoreUnavailable down) {
                if (!waitedForLedger(down, giveUp, m, intended)) {
                    return Optional.empty();
                }
            }
        }
    }

    /**
     * The ledger did not answer: closes the gate and, unless patience ran out by {@code giveUp} (false then), keeps
     * the copy hidden and waits for the gate's probes to find the ledger answering again.
     */
    private boolean waitedForLedger(StoreUnavailable down, Instant giveUp, InboundMessage m, LedgerRecord intended) {
        ledgerGate.unavailable(down);
        if (!clock.instant().isBefore(giveUp)) {
            ledgerGate.unwritten(intended, m, source, visibility);
            return false;
        }
        keepHidden(m);
        ledgerGate.awaitOpen(ledgerGate.probeInterval().multipliedBy(2));
        return true;
    }

    private void keepHidden(InboundMessage m) {
        try {
            source.changeVisibility(m, visibility);
        } catch (RuntimeException e) {
            LOG.debugf("Message %s: could not extend its visibility (%s)", m.messageId(), e.getClass().getSimpleName());
        }
    }

    private Disposition decide(LedgerRecord record, AttemptResult result, Instant now) {
        return switch (result) {
            case AttemptResult.Succeeded s -> {
                guard.succeeded(record.jobType());
                yield decisions.succeeded(record, now, keepSucceeded);
            }
            case AttemptResult.Failed f -> charged(record, f.signature(), decisions.failed(record, f.failure(), now, random), now);
            case AttemptResult.TimedOut t -> notBeside(t, charged(record, new Signature(FailureClass.TIMEOUT, "DeadlineExceeded",
                    record.jobType()), decisions.timedOut(record, t.deadline(), now, random), now));
            // A row of the same crash (a bad deploy: a heap too small, a leak) trips the guard as a row of the same failure does.
            case AttemptResult.Crashed c -> crashCharged(record, c, decisions.crashed(record, c.errorType(), now, random), now);
            // A handler that did not stop when interrupted runs until this process ends: its job waits as a stuck one does.
            case AttemptResult.Abandoned a -> a.stillRunning()
                    ? decisions.released(record, AttemptOutcome.ABANDONED,
                            "the worker shut down before the attempt finished; its handler was still running", abandonedHold, now)
                    : decisions.released(record, AttemptOutcome.ABANDONED, "the worker shut down before the attempt finished", Duration.ZERO, now);
            case AttemptResult.StoreDown down -> {
                if (down.cause().ledger()) {
                    ledgerGate.unavailable(down.cause());
                }
                yield decisions.released(record, AttemptOutcome.ABANDONED, "a store the handler needs did not answer",
                        ledgerGate.probeInterval(), now);
            }
        };
    }

    /**
     * The crash's signature is CRASH whether this attempt is charged it or CRASH_AMBIGUOUS: the same error in a row is the
     * same fault, whether the job ran alone (a suspect) or beside others.
     */
    private Disposition crashCharged(LedgerRecord record, AttemptResult.Crashed c, Disposition ifCharged, Instant now) {
        return charged(record, new Signature(FailureClass.CRASH, c.errorType(), record.jobType()), ifCharged, now);
    }

    /**
     * A timed-out handler that still runs (it ignores interrupts; the worker has reported itself stuck) holds the job's
     * next attempt back for at least twice the visibility timeout: about what an orchestrator takes to replace a worker
     * that is not live (the shipped manifests: three failed probes 10 s apart, then the shutdown), where the ladder's
     * delay alone could start it beside the stuck one, on this worker or another.
     */
    private Disposition notBeside(AttemptResult.TimedOut t, Disposition d) {
        if (!t.stillRunning() || !(d instanceof Disposition.RetryAfter retry) || retry.delay().compareTo(stuckHold) >= 0) {
            return d;
        }
        LedgerRecord next = retry.next();
        return new Disposition.RetryAfter(next.withCurrentEntry(next.currentEntry().withRetryDelay(stuckHold)), stuckHold);
    }

    /**
     * A failure is charged to the job unless the systemic guard holds it (or the quarantine it would
     * cause). DEPENDENCY_DOWN is left to the circuit breakers, which already pause consumption for it:
     * it neither extends nor breaks a row of same-signature failures.
     */
    private Disposition charged(LedgerRecord record, Signature signature, Disposition ifCharged, Instant now) {
        if (signature.failureClass() == FailureClass.DEPENDENCY_DOWN && gate.breakerStopsWork()) {
            // The breaker already stops consumption for this outage: the job pays nothing for it.
            Duration wait = decisions.policy().of(FailureClass.DEPENDENCY_DOWN).ladder().delay(1, random);
            return decisions.released(record, AttemptOutcome.HELD, "the dependency is down and its circuit breaker stops the work",
                    wait, now);
        }
        boolean watched = signature.failureClass() != FailureClass.DEPENDENCY_DOWN;
        boolean hold = (watched && guard.holdFailure(signature, record.jobType(), record.jobId()))
                || (ifCharged instanceof Disposition.Quarantine && guard.holdQuarantine(record.jobId()));
        if (!hold) {
            return ifCharged;
        }
        return decisions.released(record, AttemptOutcome.HELD, "held by the systemic-failure guard: " + signature.describe(),
                guard.holdDelay(), now);
    }

    private static void log(LedgerRecord written, AttemptResult result, Disposition d) {
        switch (result) {
            case AttemptResult.Failed f -> LOG.infof("Job %s attempt %d failed: class=%s error=%s%s", written.jobId(), written.attempt(),
                    f.failure().failureClass(), f.failure().errorType(), held(written));
            case AttemptResult.TimedOut t -> LOG.infof("Job %s attempt %d timed out after %s%s", written.jobId(), written.attempt(),
                    t.deadline(), held(written));
            case AttemptResult.Crashed c -> LOG.warnf("Job %s attempt %d ended with %s; %s", written.jobId(), written.attempt(),
                    c.errorType(), held(written).isEmpty() ? "counted as a crash" : "held by the systemic-failure guard, not counted");
            case AttemptResult.Abandoned a when a.stillRunning() -> LOG.warnf("Job %s attempt %d abandoned at shutdown with its handler"
                    + " still running (it ignored its interrupt); not counted, the message comes back in %s", written.jobId(), written.attempt(),
                    written.currentEntry().retryDelay());
            case AttemptResult.Abandoned a -> LOG.infof("Job %s attempt %d abandoned at shutdown; not counted, the message is visible again",
                    written.jobId(), written.attempt());
            case AttemptResult.StoreDown down -> LOG.infof("Job %s attempt %d given back uncounted: %s", written.jobId(), written.attempt(),
                    down.cause().getMessage());
            case AttemptResult.Succeeded s -> {
            }
        }
    }

    private static String held(LedgerRecord written) {
        return written.currentEntry() != null && written.currentEntry().outcome() == AttemptOutcome.HELD ? " (held, not counted)" : "";
    }

    /**
     * Tells a replayed job's quarantine record that the replay succeeded, and alerts. False when the record could not
     * be written: the caller keeps the copy, which comes back as a copy of a SUCCEEDED job and tells it then
     * ({@link #replaySucceededLate}).
     */
    private boolean toldReplaySucceeded(LedgerRecord written) {
        try {
            quarantine.recordReplayOutcome(JobKey.of(written), written.generation(), QuarantineStatus.REPLAYED, "SUCCEEDED");
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: generation %d succeeded but its quarantine record could not be told (%s); the copy is kept and tells it when it is back",
                    written.jobId(), written.generation(), e.getClass().getSimpleName());
            return false;
        }
        alerts.replayOutcome(written);
        return true;
    }

    /**
     * A copy of a replayed job that has SUCCEEDED: if its quarantine record still says REPLAYING for this generation with
     * no outcome (the success could not be told when it happened), tells it now. False while the record cannot be read
     * or written: the caller keeps the copy, to try again when it is back.
     */
    boolean replaySucceededLate(LedgerRecord done) {
        if (done.generation() <= 1) {
            return true;
        }
        Optional<io.poisonguard.quarantine.QuarantineRecord> record;
        try {
            record = quarantine.find(JobKey.of(done));
        } catch (RuntimeException e) {
            return false;
        }
        boolean untold = record.filter(r -> r.status() == QuarantineStatus.REPLAYING && r.replays().stream()
                .anyMatch(e -> e.generation() == done.generation() && e.outcome() == null)).isPresent();
        return !untold || toldReplaySucceeded(done);
    }

    /** Acts on the message once {@code written} is durable. */
    void apply(LedgerRecord written, Disposition d, InboundMessage m, Verdict verdict) {
        switch (d) {
            case Disposition.Complete c -> {
                metrics.outcome(Outcome.SUCCEEDED, null);
                // A replay's success goes on its quarantine record before its copy goes: deleted first, a copy whose
                // record could not be told would leave that record REPLAYING for good.
                if (written.generation() > 1 && !toldReplaySucceeded(written)) {
                    return;
                }
                source.delete(m);
            }
            case Disposition.RetryAfter r -> {
                Duration visible = Decisions.visibilityFor(r.delay(), Duration.between(m.receivedAt(), clock.instant()));
                source.changeVisibility(m, visible);
                AttemptOutcome ended = r.next().currentEntry().outcome();
                metrics.outcome(ended == AttemptOutcome.ABANDONED ? Outcome.ABANDONED
                        : ended == AttemptOutcome.HELD ? Outcome.HELD : Outcome.RETRY_SCHEDULED, r.next().currentEntry().failureClass());
            }
            case Disposition.Quarantine q -> quarantiner.complete(written, m, verdict.diagnostics());
        }
    }
}

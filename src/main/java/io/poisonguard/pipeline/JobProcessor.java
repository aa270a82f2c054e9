package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.alerts.Alerts;
import io.poisonguard.admission.JobIdentity;
import io.poisonguard.admission.Preflight;
import io.poisonguard.admission.Verdict;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Disposition;
import io.poisonguard.disposition.Intake;
import io.poisonguard.effects.EffectStore;
import io.poisonguard.effects.LedgeredEffects;
import io.poisonguard.failure.Classifier;
import io.poisonguard.failure.Failure;
import io.poisonguard.handler.Job;
import io.poisonguard.handler.JobHandler;
import io.poisonguard.handler.JobHandlers;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.observability.Metrics;
import io.poisonguard.observability.Metrics.Outcome;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.tenants.TenantDirectory;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Named;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * Sequences the I/O around the pure decisions for one received message: read the ledger, decide,
 * make the next state durable, and only then act on the message (run, hide, or delete).
 */
@ApplicationScoped
public class JobProcessor {
    private static final Logger LOG = Logger.getLogger(JobProcessor.class);
    /** Lost races on one ledger item before the copy is left to redeliver. */
    private static final int MAX_CONFLICTS = 5;

    private final LedgerStore ledger;
    private final SourceQueue source;
    private final Quarantiner quarantiner;
    private final EffectStore effects;
    private final JobHandlers handlers;
    private final Preflight preflight;
    private final Decisions decisions;
    private final Classifier classifier;
    private final Clock clock;
    private final RandomGenerator random;
    private final Metrics metrics;
    private final Heartbeat heartbeat;
    private final String worker;
    private final PoisonGuardConfig config;
    private final TenantDirectory tenants;
    private final QuarantineStore quarantine;
    private final Alerts alerts;
    private final IsolationLane lane;

    public JobProcessor(LedgerStore ledger, SourceQueue source, Quarantiner quarantiner, EffectStore effects, JobHandlers handlers,
                        Preflight preflight, Decisions decisions, Classifier classifier, Clock clock, RandomGenerator random,
                        Metrics metrics, Heartbeat heartbeat, @Named("worker-id") String worker, PoisonGuardConfig config,
                        TenantDirectory tenants, QuarantineStore quarantine, Alerts alerts, IsolationLane lane) {
        this.lane = lane;
        this.alerts = alerts;
        this.tenants = tenants;
        this.quarantine = quarantine;
        this.ledger = ledger;
        this.source = source;
        this.quarantiner = quarantiner;
        this.effects = effects;
        this.handlers = handlers;
        this.preflight = preflight;
        this.decisions = decisions;
        this.classifier = classifier;
        this.clock = clock;
        this.random = random;
        this.metrics = metrics;
        this.heartbeat = heartbeat;
        this.worker = worker;
        this.config = config;
    }

    public void process(InboundMessage m) {
        Instant received = clock.instant();
        metrics.received(Duration.between(m.sentAt(), received));
        JobIdentity id = JobIdentity.of(m);
        Verdict verdict = preflight.check(m);
        int generation = m.attribute(WireAttributes.GENERATION).map(JobProcessor::parseGeneration).orElse(1);
        Optional<String> rejection = switch (verdict) {
            case Verdict.Rejected r -> Optional.of(r.describe());
            // A replayed copy runs only if its tenant is still authorized now (invariant 10).
            case Verdict.Admitted a when generation > 1 -> tenants.refusal(a.tenant(), a.jobType()).map(why -> "tenant-not-authorized: " + why);
            case Verdict.Admitted a -> Optional.empty();
        };

        for (int tries = 0; tries < MAX_CONFLICTS; tries++) {
            boolean alone = ledger.find(id.jobId()).map(r -> decisions.needsIsolation(r, clock.instant())).orElse(false);
            try (IsolationLane.Slot slot = lane.enter(alone)) {
                // Read again: taking the lane may have waited for other jobs to finish.
                Instant now = clock.instant();
                LedgerRecord current = ledger.find(id.jobId()).orElseGet(() -> LedgerRecord.fresh(id.jobId(),
                        m.attribute(WireAttributes.TENANT).orElse(null), m.attribute(WireAttributes.JOB_TYPE).orElse(null), generation, now));
                if (decisions.needsIsolation(current, now) != alone) {
                    continue;
                }
                boolean crashFound = current.state() == JobState.ACTIVE && !current.leaseHeldAt(now);
                Intake intake = decisions.intake(current, rejection, generation, now, worker,
                        new Decisions.Lane(slot.alone(), slot.othersInFlight()), random);
                switch (intake) {
                    case Intake.StaleGeneration stale -> {
                        source.delete(m);
                        metrics.outcome(Outcome.DUPLICATE_DROPPED, null);
                        LOG.infof("Job %s: dropped a copy of generation %d (the job is at generation %d)", id.jobId(),
                                stale.messageGeneration(), stale.current().generation());
                    }
                    case Intake.AlreadySucceeded done -> {
                        source.delete(m);
                        metrics.outcome(Outcome.DUPLICATE_DROPPED, null);
                        LOG.debugf("Job %s already succeeded; dropped a duplicate copy", id.jobId());
                    }
                    case Intake.ActiveElsewhere active -> {
                        source.changeVisibility(m, Decisions.visibilityFor(active.retryIn(), Duration.between(m.receivedAt(), now)));
                        metrics.outcome(Outcome.DEFERRED_ACTIVE_ELSEWHERE, null);
                        LOG.debugf("Job %s is active under %s; this copy waits %s", id.jobId(), active.current().leaseOwner(), active.retryIn());
                    }
                    case Intake.AlreadyQuarantined q -> quarantiner.complete(q.current(), m, verdict.diagnostics());
                    case Intake.Decided decided -> {
                        LedgerRecord written = ledger.write(decided.disposition().next());
                        countCrash(crashFound, current);
                        if (verdict instanceof Verdict.Rejected r) {
                            metrics.admissionRejected(r.reason());
                        } else if (rejection.isPresent()) {
                            metrics.admissionRejected("tenant-not-authorized");
                        }
                        apply(written, decided.disposition(), m, verdict);
                    }
                    case Intake.Run run -> {
                        LedgerRecord written = ledger.write(run.next());
                        countCrash(crashFound, current);
                        if (slot.alone()) {
                            LOG.infof("Job %s: a suspect (its last attempt crashed); attempt %d runs alone in this worker",
                                    id.jobId(), written.attempt());
                        }
                        execute(written, m, (Verdict.Admitted) verdict);
                    }
                }
                return;
            } catch (LedgerConflict conflict) {
                LOG.debugf("Job %s: %s; deciding again", id.jobId(), conflict.getMessage());
            }
        }
        metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
        LOG.warnf("Job %s: ledger kept changing under %d attempts to decide; leaving the copy to redeliver", id.jobId(), MAX_CONFLICTS);
    }

    private void countCrash(boolean crashFound, LedgerRecord before) {
        if (crashFound) {
            boolean attributable = !decisions.policy().attributeCrashes() || before.currentEntry().isolated();
            metrics.crash(attributable);
        }
    }

    private static int parseGeneration(String s) {
        try {
            return Math.max(1, Integer.parseInt(s));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    private void execute(LedgerRecord started, InboundMessage m, Verdict.Admitted admitted) {
        JobHandler handler = handlers.forType(admitted.jobType()).orElseThrow();
        Job job = new Job(started.jobId(), admitted.tenant(), admitted.jobType(), admitted.schemaVersion(), admitted.text(),
                started.attempt(), started.generation());
        LedgeredEffects context = new LedgeredEffects(effects, clock, started.jobId(), worker + "#" + started.generation() + "." + started.attempt(),
                config.consumer().visibilityTimeout(), config.retention().effects());
        Running running = heartbeat.register(m, started);
        long t0 = System.nanoTime();
        Failure failure = null;
        try {
            handler.handle(job, context);
        } catch (Throwable t) {
            if (t instanceof VirtualMachineError vme && !(t instanceof StackOverflowError)) {
                throw vme;
            }
            if (t instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            failure = classifier.classify(t);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        metrics.handled(admitted.jobType(), failure == null ? "succeeded" : failure.failureClass().name(), took);
        running.lock.lock();
        try {
            running.finish();
            heartbeat.unregister(running);
            Instant now = clock.instant();
            Disposition d = failure == null
                    ? decisions.succeeded(running.record(), now, config.retention().succeeded())
                    : decisions.failed(running.record(), failure, now, random);
            LedgerRecord written;
            try {
                written = ledger.write(d.next());
            } catch (LedgerConflict lost) {
                // Our lease ran out and another attempt took the job over: its outcome counts, not ours.
                metrics.outcome(Outcome.LEFT_TO_REDELIVER, null);
                LOG.warnf("Job %s attempt %d finished after losing its lease; the newer attempt decides", started.jobId(), started.attempt());
                return;
            }
            if (failure != null) {
                LOG.infof("Job %s attempt %d failed: class=%s error=%s", started.jobId(), started.attempt(), failure.failureClass(), failure.errorType());
            }
            apply(written, d, m, admitted);
        } finally {
            running.lock.unlock();
        }
    }

    private void apply(LedgerRecord written, Disposition d, InboundMessage m, Verdict verdict) {
        switch (d) {
            case Disposition.Complete c -> {
                source.delete(m);
                metrics.outcome(Outcome.SUCCEEDED, null);
                if (written.generation() > 1) {
                    quarantine.recordReplayOutcome(written.jobId(), written.generation(), QuarantineStatus.REPLAYED, "SUCCEEDED");
                    alerts.replayOutcome(written);
                }
            }
            case Disposition.RetryAfter r -> {
                Duration visible = Decisions.visibilityFor(r.delay(), Duration.between(m.receivedAt(), clock.instant()));
                source.changeVisibility(m, visible);
                metrics.outcome(Outcome.RETRY_SCHEDULED, r.next().currentEntry().failureClass());
            }
            case Disposition.Quarantine q -> quarantiner.complete(written, m, verdict.diagnostics());
        }
    }
}

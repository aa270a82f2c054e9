package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import jakarta.inject.Singleton;
import jakarta.inject.Named;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The ledger-health gate. When the ledger (DynamoDB) stops answering, no attempt can be recorded
 * before its handler runs (invariant 1), so consumption pauses, as it does for an open breaker:
 * copies in flight go back uncounted and nothing cycles toward SQS's redrive backstop. Every probe
 * interval one cheap read probes the store; when it answers, attempts whose start write had an
 * unknown outcome are released (uncounted) and consumption resumes.
 */
@Singleton
public class LedgerGate {
    private static final Logger LOG = Logger.getLogger(LedgerGate.class);
    /** The key the probe reads: any answer, item or not, proves the table answers. */
    static final JobKey PROBE_KEY = new JobKey(null, "poison-guard:ledger-probe");
    private static final Duration WAIT_STEP = Duration.ofMillis(200);
    /** The longest SQS hides a message in one change. */
    private static final Duration MAX_HIDE = Duration.ofHours(12);

    private final LedgerStore ledger;
    private final Decisions decisions;
    private final Clock clock;
    private final Metrics metrics;
    private final String worker;
    private final Duration probeInterval;
    /** Starts written without an answer, each with its copy (kept hidden meanwhile), released once the ledger answers. */
    private final Queue<Unsettled> unsettled = new ConcurrentLinkedQueue<>();
    /** Attempts' endings that could not be written within the outcome patience: written once the ledger answers. */
    private final Queue<Unwritten> unwritten = new ConcurrentLinkedQueue<>();
    /** Held by the one caller that probes; others do not wait behind a probe that may take seconds. */
    private final ReentrantLock probing = new ReentrantLock();
    /** Failures reported so far (guarded by this): a probe that settled while another came in does not open the gate. */
    private long failures;
    private volatile Instant downSince;
    /**
     * A call was refused (a permission, credentials, a table) since the gate last opened: the probe then writes too, as a
     * role may keep its reads and lose its writes, and a probe that only read would reopen the gate for every copy to meet
     * the same refusal again.
     */
    private volatile boolean refusedSince;
    private volatile Instant nextProbe;

    public LedgerGate(LedgerStore ledger, Decisions decisions, Clock clock, Metrics metrics, @Named("worker-id") String worker,
                      PoisonGuardConfig config) {
        this.ledger = ledger;
        this.decisions = decisions;
        this.clock = clock;
        this.metrics = metrics;
        this.worker = worker;
        this.probeInterval = config.ledgerGate().probeInterval();
    }

    /** A store call failed for want of an answer: pause consumption until a probe succeeds. */
    public synchronized void unavailable(StoreUnavailable e) {
        failures++;
        if (e.refused()) {
            refusedSince = true;
        }
        if (downSince == null) {
            downSince = clock.instant();
            nextProbe = downSince.plus(probeInterval);
            metrics.ledgerUnavailable(true);
            LOG.warnf("The ledger does not answer (%s); consumption pauses, nothing is charged to the jobs in flight", e.getMessage());
        }
    }

    /**
     * An attempt's start was written but no answer came back: if it landed, its handler never ran. Released (uncounted)
     * once the ledger answers again, before consumption resumes. Its copy is kept hidden until then, as an unwritten
     * ending's is (shown meanwhile, a worker whose ledger answers would find the landed start's lease run out and charge
     * the job a crash for an attempt that never ran), then shown at once.
     */
    void startUnanswered(StoreUnavailable e, LedgerRecord intendedStart, InboundMessage copy, SourceQueue source, Duration visibility) {
        HeldCopy held = new HeldCopy(intendedStart.jobId(), copy, source, visibility);
        // Hidden first: a probe that settles the start at once must find the copy hidden already, or its showing would be
        // undone. Then the outage and the start in one step: a probe that read the failures between the two would find
        // nothing to settle and open the gate, leaving the start ACTIVE to run out into a crash.
        held.keepHidden();
        synchronized (this) {
            unavailable(e);
            unsettled.add(new Unsettled(intendedStart, held));
        }
    }

    private record Unsettled(LedgerRecord start, HeldCopy copy) {
    }

    /**
     * An attempt's ending that was not written within {@code ledger-gate.outcome-patience}: written once the ledger answers
     * again, before consumption resumes, if the record is still that attempt's. Left ACTIVE, its lease would run out and
     * the copy that comes back would charge the job a crash for the ledger's outage, and run it (and its effects) again.
     */
    void unwritten(LedgerRecord intendedEnding, InboundMessage copy, SourceQueue source, Duration visibility) {
        Unwritten u = new Unwritten(intendedEnding, new HeldCopy(intendedEnding.jobId(), copy, source, visibility));
        unwritten.add(u);
        u.copy().keepHidden();
    }

    private record Unwritten(LedgerRecord ending, HeldCopy copy) {
    }

    /**
     * The copy of a job whose start or ending waits for the ledger. It is kept hidden until that is settled: shown meanwhile,
     * a worker whose ledger answers (this one's outage may be its own) would find the attempt ACTIVE with its lease run out,
     * charge the job a crash for it and run it again, its effects too. SQS hides a copy at most 12 hours after its receipt;
     * past that it shows again whatever this gate does.
     */
    private static final class HeldCopy {
        final String jobId;
        final InboundMessage copy;
        final SourceQueue source;
        final Duration visibility;
        private boolean warned;

        HeldCopy(String jobId, InboundMessage copy, SourceQueue source, Duration visibility) {
            this.jobId = jobId;
            this.copy = copy;
            this.source = source;
            this.visibility = visibility;
        }

        /**
         * Hides the copy for twice the visibility timeout: probes come at most a visibility timeout apart (checked at boot),
         * but a probe's own read and the SQS calls before it can stretch the gap.
         */
        void keepHidden() {
            Duration twice = visibility.multipliedBy(2);
            change(twice.compareTo(MAX_HIDE) > 0 ? MAX_HIDE : twice);
        }

        /** Shows the copy again at once: what it waited for is settled, and the intake decides what it is now. */
        void show() {
            change(Duration.ZERO);
        }

        private void change(Duration d) {
            try {
                source.changeVisibility(copy, d);
            } catch (RuntimeException e) {
                if (!warned) {
                    warned = true;
                    LOG.warnf("Job %s: could not change the visibility of the copy that waits for the ledger (%s)", jobId,
                            e.getClass().getSimpleName());
                }
            }
        }
    }

    /** Keeps hidden, for another visibility timeout, every copy whose start or ending still waits: once per probe. */
    private void keepUnwrittenHidden() {
        unwritten.forEach(u -> u.copy().keepHidden());
        unsettled.forEach(u -> u.copy().keepHidden());
    }

    /** When the ledger went quiet, if it is. */
    public Optional<Instant> downSince() {
        return Optional.ofNullable(downSince);
    }

    /**
     * Whether consumption may go on. While paused, the first caller after the probe interval probes
     * the ledger (one read); callers meanwhile get "paused" at once instead of waiting on the probe.
     */
    public boolean open() {
        Instant since = downSince;
        if (since == null) {
            return true;
        }
        Instant due = nextProbe;
        if ((due != null && clock.instant().isBefore(due)) || !probing.tryLock()) {
            return false;
        }
        long failuresBefore;
        synchronized (this) {
            failuresBefore = failures;
        }
        try {
            ledger.find(PROBE_KEY);
            if (refusedSince) {
                probeWrite();
            }
            settle();
        } catch (StoreUnavailable still) {
            keepUnwrittenHidden();
            nextProbe = clock.instant().plus(probeInterval);
            return false;
        } catch (RuntimeException refused) {
            // An answer that is not "unavailable" (an expired token, a denied action, a missing table) is no answer
            // either: the gate stays closed and probes again, and the receiver that asked goes on living.
            keepUnwrittenHidden();
            nextProbe = clock.instant().plus(probeInterval);
            LOG.warnf("The ledger probe failed (%s); consumption stays paused, the next probe in %s", refused.getClass().getSimpleName(), probeInterval);
            return false;
        } finally {
            probing.unlock();
        }
        synchronized (this) {
            if (failures != failuresBefore || !unsettled.isEmpty() || !unwritten.isEmpty()) {
                // Another call went unanswered while this probe settled (the ledger flaps), and what it left to settle may
                // have come after the walk: opening now would leave a landed start ACTIVE, to run out into a crash.
                nextProbe = clock.instant().plus(probeInterval);
                return false;
            }
            if (downSince != null) {
                LOG.infof("The ledger answers again after %s; consumption resumes", Duration.between(downSince, clock.instant()));
            }
            downSince = null;
            nextProbe = null;
            refusedSince = false;
            metrics.ledgerUnavailable(false);
        }
        return true;
    }

    /**
     * A conditional create of the probe's own item ({@link #PROBE_KEY}, one small item kept in the ledger table): written the
     * first time, refused by its condition after that; either is an answer that writes are allowed (DynamoDB checks the
     * permission before the condition).
     */
    private void probeWrite() {
        try {
            ledger.write(LedgerRecord.fresh(PROBE_KEY.jobId(), null, "poison-guard-probe", 1, clock.instant()));
        } catch (LedgerConflict answered) {
            // The item is there already: the write was allowed.
        }
    }

    /** Waits at most {@code max} for the ledger to answer again (probing as due); true when it does. */
    boolean awaitOpen(Duration max) {
        Instant until = clock.instant().plus(max);
        while (!open()) {
            if (!clock.instant().isBefore(until)) {
                return false;
            }
            try {
                Thread.sleep(WAIT_STEP);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    public Duration probeInterval() {
        return probeInterval;
    }

    private void settle() {
        for (Iterator<Unsettled> it = unsettled.iterator(); it.hasNext(); ) {
            Unsettled waiting = it.next();
            LedgerRecord intended = waiting.start();
            Optional<LedgerRecord> stored = ledger.findOwn(JobKey.of(intended));
            boolean landed = stored.map(r -> r.state() == JobState.ACTIVE && r.attempt() == intended.attempt()
                    && worker.equals(r.leaseOwner()) && r.generation() == intended.generation()).orElse(false);
            if (landed) {
                try {
                    ledger.write(decisions.released(stored.get(), AttemptOutcome.ABANDONED,
                            "the ledger did not answer when the attempt started; its handler never ran", Duration.ZERO, clock.instant()).next());
                    LOG.infof("Job %s: attempt %d, started while the ledger was not answering, released uncounted",
                            intended.jobId(), intended.attempt());
                } catch (LedgerConflict moved) {
                    LOG.debugf("Job %s moved on before its unsettled start was released", intended.jobId());
                }
            }
            it.remove();
            waiting.copy().show();
        }
        for (Iterator<Unwritten> it = unwritten.iterator(); it.hasNext(); ) {
            Unwritten held = it.next();
            LedgerRecord intended = held.ending();
            Optional<LedgerRecord> stored = ledger.findOwn(JobKey.of(intended));
            if (stored.isPresent() && Ownership.stillRunning(stored.get(), intended, worker)) {
                try {
                    ledger.write(intended.withVersion(stored.get().version()));
                    LOG.infof("Job %s: attempt %d's ending, not written while the ledger did not answer, is written now (%s)",
                            intended.jobId(), intended.attempt(), intended.state());
                } catch (LedgerConflict moved) {
                    LOG.debugf("Job %s moved on before its unwritten ending was written", intended.jobId());
                }
            }
            it.remove();
            held.copy().show();
        }
    }
}

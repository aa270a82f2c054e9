package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import jakarta.inject.Named;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps long-running attempts alive: every heartbeat interval it extends both the message's
 * visibility and the ledger lease, so neither SQS nor another worker takes a job that is still
 * being worked on. A worker that dies stops beating, and its lease runs out.
 */
@Singleton
public class Heartbeat {
    private static final Logger LOG = Logger.getLogger(Heartbeat.class);

    private final Set<Running> running = ConcurrentHashMap.newKeySet();
    private final SourceQueue source;
    private final LedgerStore ledger;
    private final Clock clock;
    private final Duration interval;
    private final Duration visibility;
    private final String worker;
    /**
     * How much of its lease an attempt must have left to act on its success without asking the ledger: a quarter of the
     * lease (at least a second), so deferred effects that take a while (a slow send) still end inside it, and other
     * workers' clocks may run a little ahead.
     */
    private final Duration actMargin;
    private final java.util.concurrent.Executor renewals;
    private ScheduledExecutorService timer;

    @jakarta.inject.Inject
    public Heartbeat(SourceQueue source, LedgerStore ledger, Clock clock, PoisonGuardConfig config, @Named("worker-id") String worker) {
        this(source, ledger, clock, config, worker, renewalThreads());
    }

    private static java.util.concurrent.Executor renewalThreads() {
        java.util.concurrent.ThreadFactory threads = Thread.ofVirtual().name("poison-guard-renewal-", 0).factory();
        return renewal -> threads.newThread(renewal).start();
    }

    /** {@code renewals} runs each job's renewal: on a thread of its own in the service, so one that hangs holds up no other. */
    Heartbeat(SourceQueue source, LedgerStore ledger, Clock clock, PoisonGuardConfig config, String worker, java.util.concurrent.Executor renewals) {
        this.renewals = renewals;
        this.source = source;
        this.ledger = ledger;
        this.clock = clock;
        this.interval = config.consumer().heartbeatInterval();
        this.actMargin = max(Duration.ofSeconds(1), config.consumer().visibilityTimeout().dividedBy(4));
        this.visibility = config.consumer().visibilityTimeout();
        this.worker = worker;
    }

    @PostConstruct
    void start() {
        timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("poison-guard-heartbeat").factory());
        long tick = Math.max(100, interval.toMillis() / 4);
        // A scheduled task that throws is never run again: whatever one beat meets, the next one runs.
        timer.scheduleWithFixedDelay(() -> {
            try {
                beat();
            } catch (Throwable t) {
                LOG.errorf("A heartbeat failed (%s); the next one runs as usual", t.getClass().getSimpleName());
            }
        }, tick, tick, TimeUnit.MILLISECONDS);
    }

    @PreDestroy
    void stop() {
        timer.shutdownNow();
    }

    Running register(InboundMessage m, LedgerRecord started, Instant deadline) {
        // The lease was written at the intake, which may have been a while before the handler got its slot: the
        // first renewal is due an interval after that write, not after the start.
        Instant now = clock.instant();
        Instant leased = started.updatedAt() != null && started.updatedAt().isBefore(now) ? started.updatedAt() : now;
        Running r = new Running(m, started, leased, deadline);
        running.add(r);
        return r;
    }

    void unregister(Running r) {
        running.remove(r);
    }

    public int inFlight() {
        return running.size();
    }

    /** Starts the renewal of every running job that is due; a job whose last renewal has not returned is skipped. */
    void beat() {
        Instant now = clock.instant();
        for (Running r : running) {
            if (Duration.between(r.extendedAt(), now).compareTo(interval) >= 0 && !r.finished()) {
                renewals.execute(() -> renew(r));
            }
        }
    }

    /**
     * Renews one job: its ledger lease first, counted from the write, then its copy's visibility. The lease is what
     * keeps another worker from running the job beside this one, so it waits for no SQS call (a visibility change
     * that hangs or fails leaves a redelivered copy waiting on the lease instead of running).
     */
    private void renew(Running r) {
        if (!r.lock.tryLock()) {
            return;
        }
        try {
            Instant now = clock.instant();
            if (r.finished() || !now.isBefore(r.deadline()) || Duration.between(r.extendedAt(), now).compareTo(interval) < 0) {
                // Past its deadline the attempt is being ended: a lease for it would be a lease nobody runs.
                return;
            }
            boolean leased = false;
            try {
                r.record(ledger.write(r.record().withLease(worker, now.plus(visibility))));
                r.extendedAt(now);
                leased = true;
            } catch (LedgerConflict conflict) {
                if (afterConflict(r) && Duration.between(r.hiddenAt(), now).compareTo(interval) >= 0) {
                    // Still this attempt's (or not known otherwise: the read did not answer): its copy stays hidden meanwhile.
                    hide(r, now, false);
                }
                return;
            } catch (RuntimeException e) {
                // The lease is tried again at the next beat. Meanwhile the copy stays hidden: with the lease run out, a copy
                // shown to another worker would be charged a crash and run beside this attempt (the outage may be this
                // worker's alone). Once an interval, not every beat.
                LOG.warnf("Job %s: lease renewal failed (%s); will retry, and its copy is kept hidden meanwhile", r.record().jobId(),
                        e.getClass().getSimpleName());
                if (Duration.between(r.hiddenAt(), now).compareTo(interval) < 0) {
                    return;
                }
            }
            hide(r, now, leased);
        } finally {
            r.lock.unlock();
        }
    }

    /** Hides the attempt's copy for another visibility timeout; called under its lock. */
    private void hide(Running r, Instant now, boolean leased) {
        try {
            source.changeVisibility(r.message, visibility);
            r.hiddenAt(now);
        } catch (RuntimeException e) {
            // The receipt may be stale (the copy was received again elsewhere) or SQS may be unreachable: the
            // ledger lease still says this attempt runs, so a second copy waits instead of running beside it.
            LOG.warnf("Job %s: visibility extension failed (%s)%s", r.record().jobId(), e.getClass().getSimpleName(),
                    leased ? "; the ledger lease was renewed" : "");
        }
    }

    /**
     * After a renewal's conflict: an earlier renewal may have landed without an answer, and then the record is still
     * ours (taken up, and renewed on the next beat). Only a record that says otherwise ends the renewals; a read that
     * fails says nothing, and the next beat tries again. Returns whether the job may still be this attempt's.
     */
    private boolean afterConflict(Running r) {
        java.util.Optional<LedgerRecord> stored;
        try {
            stored = ledger.findOwn(io.poisonguard.ledger.JobKey.of(r.record()));
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: lease renewal conflicted and the ledger could not be read (%s); will retry", r.record().jobId(),
                    e.getClass().getSimpleName());
            return true;
        }
        if (stored.isPresent() && Ownership.stillRunning(stored.get(), r.record(), worker)) {
            r.record(stored.get());
            return true;
        }
        running.remove(r);
        r.takenOver(true);
        LOG.warnf("Job %s: lease was taken over while attempt %d still runs", r.record().jobId(), r.record().attempt());
        return false;
    }

    /** Whether an attempt may still act as its job's: see {@link #standing}. */
    enum Standing { OURS, TAKEN_OVER, UNKNOWN }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /**
     * Before an attempt acts on its success (the effects deferred to it): whether the job is still its own. A lease this
     * worker wrote that runs at least a quarter of a lease longer ({@link #actMargin}) answers at once, with no call: no
     * other worker takes a leased job. A shorter one (renewals stopped by a pause, a ledger brownout, deferred work past
     * the deadline) is taken up again by one conditional write, which another attempt's takeover fails; {@code UNKNOWN}
     * when the ledger did not answer.
     */
    Standing standing(Running r) {
        r.lock.lock();
        try {
            if (r.takenOver()) {
                return Standing.TAKEN_OVER;
            }
            Instant now = clock.instant();
            if (r.record().leaseHeldAt(now.plus(actMargin))) {
                return Standing.OURS;
            }
            try {
                r.record(ledger.write(r.record().withLease(worker, now.plus(visibility))));
                r.extendedAt(now);
                return Standing.OURS;
            } catch (LedgerConflict conflict) {
                java.util.Optional<LedgerRecord> stored = ledger.findOwn(io.poisonguard.ledger.JobKey.of(r.record()));
                if (stored.isPresent() && Ownership.stillRunning(stored.get(), r.record(), worker)) {
                    // Our own write landed unanswered: the lease it set is the one to trust.
                    r.record(stored.get());
                    return stored.get().leaseHeldAt(now.plus(actMargin)) ? Standing.OURS : Standing.UNKNOWN;
                }
                running.remove(r);
                r.takenOver(true);
                return Standing.TAKEN_OVER;
            }
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: could not confirm attempt %d still holds the job (%s)", r.record().jobId(), r.record().attempt(),
                    e.getClass().getSimpleName());
            return Standing.UNKNOWN;
        } finally {
            r.lock.unlock();
        }
    }
}

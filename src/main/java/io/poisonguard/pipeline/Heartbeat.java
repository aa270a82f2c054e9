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
    private ScheduledExecutorService timer;

    public Heartbeat(SourceQueue source, LedgerStore ledger, Clock clock, PoisonGuardConfig config, @Named("worker-id") String worker) {
        this.source = source;
        this.ledger = ledger;
        this.clock = clock;
        this.interval = config.consumer().heartbeatInterval();
        this.visibility = config.consumer().visibilityTimeout();
        this.worker = worker;
    }

    @PostConstruct
    void start() {
        timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("poison-guard-heartbeat").factory());
        long tick = Math.max(100, interval.toMillis() / 4);
        timer.scheduleWithFixedDelay(this::beat, tick, tick, TimeUnit.MILLISECONDS);
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

    private java.util.Optional<LedgerRecord> findQuietly(LedgerRecord r) {
        try {
            return ledger.findOwn(io.poisonguard.ledger.JobKey.of(r));
        } catch (RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    public int inFlight() {
        return running.size();
    }

    void beat() {
        Instant now = clock.instant();
        for (Running r : running) {
            if (Duration.between(r.extendedAt(), now).compareTo(interval) < 0 || !r.lock.tryLock()) {
                continue;
            }
            try {
                if (r.finished() || !now.isBefore(r.deadline())) {
                    // Past its deadline the attempt is being ended: a lease for it would be a lease nobody runs.
                    continue;
                }
                try {
                    source.changeVisibility(r.message, visibility);
                } catch (RuntimeException e) {
                    // The receipt may be stale (the copy was received again elsewhere) or SQS may be
                    // unreachable: the ledger lease still says this attempt runs, so a second copy waits
                    // instead of running beside it.
                    LOG.warnf("Job %s: visibility extension failed (%s); renewing the ledger lease anyway", r.record().jobId(),
                            e.getClass().getSimpleName());
                }
                r.record(ledger.write(r.record().withLease(worker, now.plus(visibility))));
                r.extendedAt(now);
            } catch (LedgerConflict lost) {
                // An earlier renewal may have landed without an answer: then the record is still ours.
                java.util.Optional<LedgerRecord> stored = findQuietly(r.record());
                if (stored.isPresent() && Ownership.stillRunning(stored.get(), r.record(), worker)) {
                    r.record(stored.get());
                } else {
                    running.remove(r);
                    LOG.warnf("Job %s: lease was taken over while attempt %d still runs", r.record().jobId(), r.record().attempt());
                }
            } catch (RuntimeException e) {
                LOG.warnf("Job %s: lease renewal failed (%s); will retry", r.record().jobId(), e.getClass().getSimpleName());
            } finally {
                r.lock.unlock();
            }
        }
    }
}

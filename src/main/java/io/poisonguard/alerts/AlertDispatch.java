package io.poisonguard.alerts;

import io.poisonguard.failure.Scrubber;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Delivery to one notifier, off the job's thread, with bounded resources: at most {@code workers} sends at
 * once and {@code capacity} alerts waiting. An alert that finds the queue full (the notifier is down or
 * slow and a quarantine storm is on) is dropped and counted, never queued without bound: the quarantine
 * itself is durable whether or not anyone was told, and the drop counter is what the alert rules watch.
 */
final class AlertDispatch implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AlertDispatch.class);

    /** Called for each alert dropped because the queue was full. */
    interface DropCounter {
        void dropped(String notifier);
    }

    private final Notifier notifier;
    private final ThreadPoolExecutor executor;
    private final DropCounter drops;
    /** Alerts accepted and not yet through their delivery (queued or sending). */
    private final java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger();
    /** How long closing waits for queued alerts to be delivered. */
    static final Duration DRAIN = Duration.ofSeconds(10);

    AlertDispatch(Notifier notifier, int workers, int capacity, DropCounter drops) {
        this.notifier = notifier;
        this.drops = drops;
        this.executor = new ThreadPoolExecutor(workers, workers, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(capacity),
                Thread.ofVirtual().name("alert-" + notifier.name() + "-", 0).factory(), new ThreadPoolExecutor.AbortPolicy());
    }

    /** Queues the alert for delivery; false when it was dropped. */
    boolean offer(Alert alert) {
        try {
            pending.incrementAndGet();
            executor.execute(() -> {
                try {
                    deliver(alert);
                } finally {
                    pending.decrementAndGet();
                }
            });
            return true;
        } catch (RejectedExecutionException full) {
            pending.decrementAndGet();
            drops.dropped(notifier.name());
            LOG.warnf("The %s notifier is behind; dropped %s for job %s (counted in poison_guard_alerts_dropped_total)",
                    notifier.name(), alert.event(), alert.jobId());
            return false;
        }
    }

    private void deliver(Alert alert) {
        try {
            notifier.send(alert);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.warnf("The %s notifier failed to deliver %s for job %s: %s: %s", notifier.name(), alert.event(), alert.jobId(),
                    e.getClass().getSimpleName(), Scrubber.scrub(e.getMessage(), 300));
        }
    }

    /** Takes no new alert; those queued and in delivery go on. */
    void shutdown() {
        executor.shutdown();
    }

    /** Delivers what is queued, waiting at most {@link #DRAIN}, then closes the notifier. */
    @Override
    public void close() {
        close(Instant.now().plus(DRAIN));
    }

    /**
     * Delivers what is queued until {@code deadline} (the process is stopping: an alert still queued when it exits is
     * lost), counts what is left then as dropped, and closes the notifier after its last send.
     */
    void close(Instant deadline) {
        executor.shutdown();
        try {
            long wait = Math.max(0, Duration.between(Instant.now(), deadline).toNanos());
            if (!executor.awaitTermination(wait, TimeUnit.NANOSECONDS)) {
                int left = pending.get();
                executor.shutdownNow();
                for (int i = 0; i < left; i++) {
                    drops.dropped(notifier.name());
                }
                LOG.warnf("The %s notifier had %d alerts undelivered at shutdown (counted in poison_guard_alerts_dropped_total)",
                        notifier.name(), left);
                executor.awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (notifier instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.debugf("closing %s: %s", notifier.name(), e.getClass().getSimpleName());
            }
        }
    }
}

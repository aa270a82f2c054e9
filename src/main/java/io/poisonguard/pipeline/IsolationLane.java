package io.poisonguard.pipeline;

import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Where a job runs inside this worker. Ordinary jobs share the worker; a suspect (its last attempt
 * crashed) runs alone: it waits until the jobs in flight finish, no new job starts beside it, and the
 * poller stops receiving while it waits or runs. If the worker dies then, the suspect killed it.
 * A fair read/write lock gives exactly that: shared holders are the ordinary jobs, the exclusive
 * holder is the suspect, and a waiting suspect keeps new ordinary jobs out.
 */
@Singleton
public class IsolationLane {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);
    private final AtomicInteger suspects = new AtomicInteger();
    /**
     * With room for one job at a time, a job that comes into an empty lane may run alone, suspect or not: it does if it
     * also takes the only handler slot there and then, before its attempt is written, and keeps it until its outcome
     * is ({@link JobProcessor.Turn#claim}); copies taken in after it wait for that slot.
     */
    private final boolean soloWorker;
    /**
     * Null: no handler is ever stuck. A worker where a handler that ignored its interrupt may still run runs nothing
     * alone: the job would not be, and it is about to be replaced, a kill a job recorded as running alone is charged.
     */
    private final WorkerHealth health;

    @jakarta.inject.Inject
    public IsolationLane(io.poisonguard.config.PoisonGuardConfig config, WorkerHealth health) {
        this.soloWorker = config.consumer().concurrency() == 1;
        this.health = health;
    }

    /** A lane in a worker where no handler is ever stuck. */
    public IsolationLane(io.poisonguard.config.PoisonGuardConfig config) {
        this(config, null);
    }

    private boolean fit() {
        return health == null || !health.handlerStuck();
    }

    /** A place in the lane; close it when the job is done. */
    public final class Slot implements AutoCloseable {
        private final boolean alone;
        private final Lock held;
        private final int othersInFlight;
        private final boolean waited;

        private Slot(boolean alone, Lock held, int othersInFlight, boolean waited) {
            this.alone = alone;
            this.held = held;
            this.othersInFlight = othersInFlight;
            this.waited = waited;
        }

        /** Whether taking the slot had to wait for other jobs (what was read before may have changed). */
        public boolean waited() {
            return waited;
        }

        /**
         * The job may run alone in its worker: taken exclusively, or the worker has room for one job only and the lane
         * was empty (then only with the handler's slot claimed, {@link JobProcessor.Turn#claim}); never in a worker
         * where a stuck handler may still run.
         */
        public boolean alone() {
            return alone;
        }

        /** Other jobs in flight in this worker when the slot was taken (0 when alone). */
        public int othersInFlight() {
            return othersInFlight;
        }

        @Override
        public void close() {
            held.unlock();
            if (held == lock.writeLock()) {
                suspects.decrementAndGet();
            }
        }
    }

    /**
     * Takes a place in the lane, waiting at most {@code maxWait}: empty when none came in time (a job
     * in flight may hang), so the caller gives its copy back rather than holding it, and the poller,
     * past its visibility.
     */
    public Optional<Slot> enter(boolean alone, Duration maxWait) {
        long nanos = Math.max(0, maxWait.toNanos());
        try {
            if (alone) {
                return enterAlone(maxWait, maxWait, maxWait, () -> false);
            }
            boolean waited = false;
            if (!lock.readLock().tryLock(0, TimeUnit.NANOSECONDS)) {
                waited = true;
                if (!lock.readLock().tryLock(nanos, TimeUnit.NANOSECONDS)) {
                    return Optional.empty();
                }
            }
            int others = Math.max(0, lock.getReadLockCount() - 1);
            // Room for one job still holds the reserve's prefetched copies, each with its attempt written: a copy is
            // alone only when nothing else is in the lane as it comes in.
            boolean fit = fit();
            return Optional.of(new Slot(soloWorker && others == 0 && fit, lock.readLock(), fit ? others : Math.max(1, others), waited));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * As {@link #enter(boolean, Duration)} for a suspect, which may have to wait longer than its copy stays hidden: it
     * waits up to {@code maxWait} in one place in the lock's queue (so an ordinary copy queued behind it never goes
     * first), while a timer keeps its copy hidden through {@code keepCopy}, first after {@code firstWait}, then every
     * {@code every}. The wait ends early when {@code keepCopy} fails (answers false), a handler is stuck past its deadline
     * (it may hold the lane for good) or the worker stops. It counts as isolating throughout, so the poller takes no more
     * work while the jobs in the lane finish.
     */
    public Optional<Slot> enterAlone(Duration firstWait, Duration maxWait, Duration every, java.util.function.BooleanSupplier keepCopy) {
        suspects.incrementAndGet();
        boolean got = false;
        boolean waited = false;
        try {
            // The timed tryLock honours the lock's fairness even with no wait (the untimed one barges).
            got = lock.writeLock().tryLock(0, TimeUnit.NANOSECONDS);
            if (!got) {
                waited = true;
                got = waitAlone(Math.max(0, maxWait.toNanos()), Math.max(0, Math.min(firstWait.toNanos(), maxWait.toNanos())),
                        Math.max(1, every.toNanos()), keepCopy);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (!got) {
                suspects.decrementAndGet();
            }
        }
        // With a stuck handler still running, the suspect is not alone: one other in flight, as its record says.
        return got ? Optional.of(new Slot(fit(), lock.writeLock(), fit() ? 0 : 1, waited)) : Optional.empty();
    }

    /** Keeps waiting suspects' copies hidden: one daemon thread for the process, made when a suspect first has to wait long. */
    private static final class Keeper {
        static final java.util.concurrent.ScheduledExecutorService EXECUTOR = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("poison-guard-lane-keeper").daemon().factory());
    }

    /**
     * One timed wait for the exclusive lock. When the wait outlasts the copy's first hiding, the keeper hides it again on
     * time and calls the wait off (by interrupting this thread, an interrupt cleared here) when the copy can no longer be
     * kept hidden or the wait should end. An interrupt from anyone else is passed on.
     */
    private boolean waitAlone(long maxNanos, long firstNanos, long everyNanos, java.util.function.BooleanSupplier keepCopy)
            throws InterruptedException {
        if (firstNanos >= maxNanos) {
            // Over before its copy needs hiding again: nothing to keep.
            return lock.writeLock().tryLock(maxNanos, TimeUnit.NANOSECONDS);
        }
        Waiter waiter = new Waiter(Thread.currentThread());
        java.util.concurrent.ScheduledFuture<?> keeping = Keeper.EXECUTOR.scheduleWithFixedDelay(() -> {
            if (!waiter.keeping()) {
                return;
            }
            boolean on = false;
            try {
                on = waitOn && fit() && keepCopy.getAsBoolean();
            } catch (RuntimeException e) {
                // Not known to be hidden: the wait ends, and the copy is given back.
            } finally {
                waiter.kept();
            }
            if (!on) {
                waiter.callOff();
            }
        }, firstNanos, everyNanos, TimeUnit.NANOSECONDS);
        boolean got;
        try {
            got = lock.writeLock().tryLock(maxNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            keeping.cancel(false);
            if (!waiter.end()) {
                throw e;
            }
            return false;
        }
        keeping.cancel(false);
        // With the lane taken the job starts at once, a hiding under way or not; a copy given back waits for it first.
        if (got ? waiter.endNow() : waiter.end()) {
            // Called off as the wait ended (the lock taken or the time up): the interrupt meant for the wait is cleared.
            Thread.interrupted();
        }
        return got;
    }

    /**
     * A suspect's wait, which the keeper may call off once, only while it lasts. A wait that ends without the lane waits
     * for a hiding under way, so no late one overrides the visibility its copy is given back with.
     */
    private static final class Waiter {
        private final Thread thread;
        /**
         * A lock, not the object's monitor: {@link #end()} waits on it on a virtual thread while the keeper's SQS call runs,
         * and on JDK 21 a virtual thread waiting inside a monitor holds its carrier (the shipped images run one).
         */
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition hidden = lock.newCondition();
        private boolean over;
        private boolean calledOff;
        private boolean hiding;

        Waiter(Thread thread) {
            this.thread = thread;
        }

        /** Whether the keeper may hide the copy now (the wait goes on); it says {@link #kept()} when done. */
        boolean keeping() {
            lock.lock();
            try {
                hiding = !over;
                return hiding;
            } finally {
                lock.unlock();
            }
        }

        void kept() {
            lock.lock();
            try {
                hiding = false;
                hidden.signalAll();
            } finally {
                lock.unlock();
            }
        }

        void callOff() {
            lock.lock();
            try {
                if (!over && !calledOff) {
                    calledOff = true;
                    thread.interrupt();
                }
            } finally {
                lock.unlock();
            }
        }

        /** Ends the wait at once; whether it had been called off (its interrupt then delivered). */
        boolean endNow() {
            lock.lock();
            try {
                over = true;
                return calledOff;
            } finally {
                lock.unlock();
            }
        }

        /** Ends the wait, once any hiding under way is done; whether it had been called off (its interrupt then delivered). */
        boolean end() {
            lock.lock();
            try {
                over = true;
                boolean interrupted = false;
                while (hiding) {
                    try {
                        hidden.await();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted && !calledOff) {
                    thread.interrupt();
                }
                return calledOff;
            } finally {
                lock.unlock();
            }
        }
    }

    /** Whether a waiting suspect may hide its copy again and wait on; off while the worker stops. */
    private volatile boolean waitOn = true;

    /** Lets suspects wait on past their copy's first hiding ({@code true}), or not while the worker stops. */
    public void waitOn(boolean on) {
        waitOn = on;
    }

    /** True while a suspect waits for or holds the lane: the poller must not take more work. */
    public boolean isolating() {
        return suspects.get() > 0;
    }
}

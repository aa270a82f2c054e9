package io.poisonguard.pipeline;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The working slots, handed out in the order messages asked for them, each waiting message with a deadline of its
 * own (the poller's "start by": half its visibility timeout after its receive).
 *
 * <p>A semaphore's timed acquire would do the same, but on a virtual thread every timed wait arms a timer on the JDK's
 * delay scheduler and cancels it when the slot comes: under a backlog that is one timer per prefetched message, and
 * the scheduler's wake-ups cost poison-guard 8-11% of its CPU (async-profiler, BENCHMARKS.md twenty-second table). Here
 * a waiting message parks without a timer; a freed slot goes straight to the oldest waiter (its thread is unparked
 * already holding it), and one watcher thread, waking every {@code tick}, gives up the waits whose deadline has
 * passed. A wait thus ends at most one tick after its deadline; the deadline is seconds away and the tick a tenth of
 * the longest wait or less, so a message is never started later than about half its visibility timeout.
 *
 * <p>Invariant: a slot is free only while nobody waits (a release with a waiter hands the slot over instead).
 */
final class Turns {
    private static final int WAITING = 0;
    private static final int GRANTED = 1;
    private static final int EXPIRED = 2;

    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private final Duration tick;
    /** Guarded by {@link #lock}. */
    private int free;
    /** Guarded by {@link #lock}. */
    private boolean closed = true;
    /** The watcher now running; one that finds itself replaced (closed, then opened again) ends. */
    private volatile Thread watcher;

    private static final class Waiter {
        final Thread thread = Thread.currentThread();
        final long deadline;
        volatile int state = WAITING;

        Waiter(long deadline) {
            this.deadline = deadline;
        }
    }

    Turns(int slots, Duration tick) {
        if (slots < 1 || tick.isNegative() || tick.isZero()) {
            throw new IllegalArgumentException("slots " + slots + ", tick " + tick);
        }
        this.free = slots;
        this.tick = tick;
    }

    /** The tick for waits of at most {@code longestWait}: a tenth of it, between 10 ms and 1 s. */
    static Duration tickFor(Duration longestWait) {
        long tenth = longestWait.toMillis() / 10;
        return Duration.ofMillis(Math.max(10, Math.min(1000, tenth)));
    }

    /** Starts the watcher: waits may be taken from now on. */
    synchronized void open() {
        lock.lock();
        try {
            if (!closed) {
                return;
            }
            closed = false;
        } finally {
            lock.unlock();
        }
        Thread next = Thread.ofVirtual().name("poison-guard-turns").unstarted(this::watch);
        watcher = next;
        next.start();
    }

    /**
     * Ends every wait at once (each returns {@code false}) and refuses new ones; slots still held are given back as
     * their holders end. Stops the watcher.
     */
    synchronized void close() {
        lock.lock();
        try {
            closed = true;
            expire(Long.MAX_VALUE, true);
        } finally {
            lock.unlock();
        }
        Thread stopping = watcher;
        watcher = null;
        if (stopping != null) {
            stopping.interrupt();
        }
    }

    /** Takes a slot if one is free and nobody waits for one: never waits. */
    boolean tryTake() {
        lock.lock();
        try {
            if (free > 0) {
                free--;
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a slot, waiting behind those who asked first until {@code deadline} ({@link System#nanoTime()}) at most
     * (about: see the class comment). {@code false}: the deadline passed, or the slots were closed, first.
     *
     * @throws InterruptedException interrupted while waiting; no slot is held then
     */
    boolean take(long deadline) throws InterruptedException {
        Waiter w;
        lock.lock();
        try {
            if (free > 0) {
                free--;
                return true;
            }
            if (closed || deadline - System.nanoTime() <= 0) {
                return false;
            }
            w = new Waiter(deadline);
            queue.addLast(w);
        } finally {
            lock.unlock();
        }
        while (w.state == WAITING) {
            LockSupport.park(this);
            if (Thread.interrupted()) {
                lock.lock();
                try {
                    if (w.state == GRANTED) {
                        releaseLocked();
                    } else if (w.state == WAITING) {
                        queue.remove(w);
                        w.state = EXPIRED;
                    }
                } finally {
                    lock.unlock();
                }
                throw new InterruptedException();
            }
        }
        return w.state == GRANTED;
    }

    /** Gives a slot back: to the oldest waiter whose deadline has not passed, or to the free ones. */
    void release() {
        lock.lock();
        try {
            releaseLocked();
        } finally {
            lock.unlock();
        }
    }

    private void releaseLocked() {
        long now = System.nanoTime();
        Waiter w;
        while ((w = queue.pollFirst()) != null) {
            if (w.deadline - now <= 0) {
                w.state = EXPIRED;
                LockSupport.unpark(w.thread);
                continue;
            }
            w.state = GRANTED;
            LockSupport.unpark(w.thread);
            return;
        }
        free++;
    }

    /** Slots free now (for tests and metrics). */
    int free() {
        lock.lock();
        try {
            return free;
        } finally {
            lock.unlock();
        }
    }

    /** Messages waiting now. */
    int waiting() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** Ends the waits whose deadline is at or before {@code now}; returns how many. */
    int expire(long now) {
        lock.lock();
        try {
            return expire(now, false);
        } finally {
            lock.unlock();
        }
    }

    private int expire(long now, boolean all) {
        int ended = 0;
        for (Iterator<Waiter> it = queue.iterator(); it.hasNext(); ) {
            Waiter w = it.next();
            if (all || w.deadline - now <= 0) {
                it.remove();
                w.state = EXPIRED;
                LockSupport.unpark(w.thread);
                ended++;
            }
        }
        return ended;
    }

    private void watch() {
        Thread me = Thread.currentThread();
        while (watcher == me) {
            try {
                Thread.sleep(tick);
            } catch (InterruptedException e) {
                return;
            }
            expire(System.nanoTime());
        }
    }
}

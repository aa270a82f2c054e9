package io.poisonguard.pacing;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Spaces events at most {@code rate} per second, blocking each caller until its turn, so bursts
 * queue up instead of turning into 429 storms (seed 002) or a second load spike (seed 001: replays
 * of old jobs go through a rate-limited path).
 *
 * <p>Gaps are measured from the moment the previous caller actually went, not from its planned
 * slot, and carry a 2% margin: a late wake-up can then never squeeze one call too many into a
 * one-second window as the quota holder counts it.
 */
public final class Pacer {
    static final double MARGIN = 1.02;

    private final long intervalNanos;
    private final ReentrantLock turn = new ReentrantLock(true);
    private long last;
    private boolean first = true;

    public Pacer(double perSecond) {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("rate must be a positive number, was " + perSecond);
        }
        this.intervalNanos = (long) (MARGIN * 1_000_000_000L / perSecond);
    }

    /**
     * Takes the next turn if it comes within {@code max}, waiting for it; false at once when it would come later (or the
     * callers ahead of this one hold the turn past {@code max}): nothing is taken then.
     */
    public boolean tryAcquire(java.time.Duration max) throws InterruptedException {
        long until = System.nanoTime() + max.toNanos();
        if (!turn.tryLock(max.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        try {
            if (!first && last + intervalNanos - until > 0) {
                return false;
            }
            takeTurn();
            return true;
        } finally {
            turn.unlock();
        }
    }

    public void acquire() throws InterruptedException {
        turn.lockInterruptibly();
        try {
            takeTurn();
        } finally {
            turn.unlock();
        }
    }

    /** With the turn's lock held: waits until the gap since the previous caller has passed, then goes. */
    private void takeTurn() throws InterruptedException {
        if (!first) {
            long wait = last + intervalNanos - System.nanoTime();
            while (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
                wait = last + intervalNanos - System.nanoTime();
            }
        }
        first = false;
        last = System.nanoTime();
    }
}

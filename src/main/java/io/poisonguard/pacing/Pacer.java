package io.poisonguard.pacing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Spaces events at most {@code rate} per second, blocking each caller until its turn, so bursts
 * queue up instead of turning into 429 storms (seed 002) or a second load spike (seed 001: replays
 * of old jobs go through a rate-limited path).
 *
 * <p>Each call is due one interval (a second over the rate, plus a 2% margin) after the later of the previous call's
 * due time and the moment it actually went: a late wake-up is never made up by the calls after it. A call may go
 * up to a small allowance ({@link #toleranceNanos}) ahead of its due time, and then goes without sleeping. The
 * allowance is what the margin leaves over after the rate itself, so no one-second window ever holds more than the
 * rate's calls; it is nothing below about 50 a second, where every call waits its whole interval. Without it, at
 * 10000 a second every call slept its tenth of a millisecond holding the turn, and the wake-ups, one behind the
 * other on a loaded machine, let through about 1000 calls a second.
 *
 * <p>Callers who must wait take their turns in arrival order; while any waits, a newcomer waits behind it.
 */
public final class Pacer {
    static final double MARGIN = 1.02;
    /** The longest allowance: enough to ride out a thread's late wake-up, short enough to stay a trickle, not a burst. */
    static final Duration MAX_TOLERANCE = Duration.ofMillis(5);
    /** Of the margin's 2% of a second, what the allowance may use: the rest covers the rounding of the interval. */
    private static final long MARGIN_FOR_ALLOWANCE_NANOS = 19_000_000L;

    /** The pacer's clock and its way of waiting: the system's, or a test's. */
    public interface Time {
        Time SYSTEM = new Time() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleepNanos(long nanos) throws InterruptedException {
                TimeUnit.NANOSECONDS.sleep(nanos);
            }
        };

        long nanoTime();

        void sleepNanos(long nanos) throws InterruptedException;
    }

    private final long intervalNanos;
    private final long toleranceNanos;
    private final Time time;
    /** When the next call is due (it may go up to the allowance earlier). */
    private final AtomicLong due;
    /** Waiters take their turns through this, in arrival order. */
    private final ReentrantLock turn = new ReentrantLock(true);
    private final AtomicInteger waiting = new AtomicInteger();

    public Pacer(double perSecond) {
        this(perSecond, Time.SYSTEM);
    }

    public Pacer(double perSecond, Time time) {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("rate must be a positive number, was " + perSecond);
        }
        this.intervalNanos = (long) (MARGIN * 1_000_000_000L / perSecond);
        this.toleranceNanos = toleranceNanos(perSecond);
        this.time = time;
        this.due = new AtomicLong(time.nanoTime());
    }

    /**
     * How far ahead of its due time a call may go at {@code perSecond}. Calls that go as early as this come at most
     * {@code 1 + allowance / interval} at once, so a second holds at most {@code (1 s + allowance) / interval + 1}
     * of them, which the margin keeps within the rate: the allowance is the margin's 19 ms less one interval, when
     * that is positive, at most {@link #MAX_TOLERANCE}.
     */
    static long toleranceNanos(double perSecond) {
        long left = MARGIN_FOR_ALLOWANCE_NANOS - (long) Math.ceil(MARGIN * 1_000_000_000L / perSecond);
        return Math.max(0, Math.min(MAX_TOLERANCE.toNanos(), left));
    }

    /**
     * Takes the next turn if it comes within {@code max}, waiting for it; false at once when it would come later (or the
     * callers ahead of this one hold the turn past {@code max}): nothing is taken then.
     */
    public boolean tryAcquire(Duration max) throws InterruptedException {
        if (goNow()) {
            return true;
        }
        long until = time.nanoTime() + max.toNanos();
        waiting.incrementAndGet();
        try {
            if (!turn.tryLock(max.toNanos(), TimeUnit.NANOSECONDS)) {
                return false;
            }
            try {
                return waitForTurn(until);
            } finally {
                turn.unlock();
            }
        } finally {
            waiting.decrementAndGet();
        }
    }

    public void acquire() throws InterruptedException {
        if (goNow()) {
            return;
        }
        waiting.incrementAndGet();
        try {
            turn.lockInterruptibly();
            try {
                waitForTurn(Long.MAX_VALUE);
            } finally {
                turn.unlock();
            }
        } finally {
            waiting.decrementAndGet();
        }
    }

    /** Goes at once when no one waits and the next call may go now; false (nothing taken) otherwise. */
    private boolean goNow() {
        return waiting.get() == 0 && tryGo(time.nanoTime()) == 0;
    }

    /**
     * Goes if a call may go at {@code now}: 0 then, the due time moved on. Otherwise, nothing taken, how long until one
     * may.
     */
    private long tryGo(long now) {
        while (true) {
            long next = due.get();
            long early = now - (next - toleranceNanos);
            if (early < 0) {
                return -early;
            }
            if (due.compareAndSet(next, Math.max(now, next) + intervalNanos)) {
                return 0;
            }
        }
    }

    /**
     * With the turn held: waits until the next call may go, then goes. {@code until}: false, nothing taken, when that
     * is later than this ({@code Long.MAX_VALUE}: no bound).
     */
    private boolean waitForTurn(long until) throws InterruptedException {
        while (true) {
            long now = time.nanoTime();
            long wait = tryGo(now);
            if (wait == 0) {
                return true;
            }
            if (until != Long.MAX_VALUE && now + wait - until > 0) {
                return false;
            }
            time.sleepNanos(wait);
        }
    }
}

package io.poisonguard.replay;

import java.time.Duration;

/**
 * Spaces events at most {@code rate} per second, blocking the caller until its slot. Replays of
 * old jobs must not become the next load spike (seed 001: "use a rate-limited replay queue").
 */
public final class Pacer {
    private final long intervalNanos;
    private long next;

    public Pacer(double perSecond) {
        if (!(perSecond > 0)) {
            throw new IllegalArgumentException("rate must be positive");
        }
        this.intervalNanos = (long) (1_000_000_000L / perSecond);
        this.next = System.nanoTime();
    }

    public void acquire() throws InterruptedException {
        long wait;
        synchronized (this) {
            long now = System.nanoTime();
            long slot = Math.max(now, next);
            next = slot + intervalNanos;
            wait = slot - now;
        }
        if (wait > 0) {
            Thread.sleep(Duration.ofNanos(wait));
        }
    }
}

package io.poisonguard.replay;

import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.pacing.Pacer;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * When a replay may go out: spaced on this instance by {@code replay.rate} (a {@link Pacer}), and counted across the fleet in
 * windows of whole seconds ({@link ReplayQuota}), so N instances replaying at once do not send N times the rate.
 *
 * <p>A window is the fewest whole seconds (up to {@value #MAX_WINDOW_SECONDS}) in which the rate is a whole number of sends
 * (2.5/s: 5 sends in 2 s; 0.25/s: 1 in 4 s); where none is, 1 s and the rate rounded down (never below one send). When the
 * count does not answer, the replay goes out paced by this instance alone (said at WARN once a minute): an outage of the count
 * must not stop an operator's replay at 3 a.m.
 */
final class ReplayPacing {
    private static final Logger LOG = Logger.getLogger(ReplayPacing.class);
    static final int MAX_WINDOW_SECONDS = 10;
    private static final Duration WARN_EVERY = Duration.ofMinutes(1);
    /** How long a window's count is kept (it is read only while the window lasts). */
    private static final Duration KEEP_COUNT = Duration.ofHours(1);

    private final Pacer local;
    private final ReplayQuota fleet;
    private final Clock clock;
    private final int windowSeconds;
    private final int limit;
    private volatile Instant warnedAt = Instant.MIN;

    ReplayPacing(double rate, ReplayQuota fleet, Clock clock) {
        this.local = new Pacer(rate);
        this.fleet = fleet;
        this.clock = clock;
        int seconds = 1;
        for (int w = 1; w <= MAX_WINDOW_SECONDS; w++) {
            double sends = rate * w;
            if (sends >= 1 && Math.abs(sends - Math.rint(sends)) < 1e-6) {
                seconds = w;
                break;
            }
        }
        this.windowSeconds = seconds;
        this.limit = Math.max(1, (int) Math.floor(rate * seconds + 1e-6));
    }

    int windowSeconds() {
        return windowSeconds;
    }

    int limit() {
        return limit;
    }

    /** Waits until this instance's pace and the fleet's count both let one more replay go. */
    void acquire() throws InterruptedException {
        local.acquire();
        while (true) {
            Instant now = clock.instant();
            long window = now.getEpochSecond() / windowSeconds;
            try {
                if (fleet.claim(window, limit, now.plus(KEEP_COUNT))) {
                    return;
                }
            } catch (StoreUnavailable down) {
                if (warnedAt.plus(WARN_EVERY).isBefore(now)) {
                    warnedAt = now;
                    LOG.warnf("The fleet's replay count did not answer (%s); replays are paced by each instance alone meanwhile",
                            down.getMessage());
                }
                return;
            }
            // Full: the next window, with a few milliseconds of spread so the instances waiting do not all ask at once.
            long nextMillis = (window + 1) * windowSeconds * 1000L - now.toEpochMilli() + ThreadLocalRandom.current().nextLong(20);
            TimeUnit.MILLISECONDS.sleep(Math.max(1, nextMillis));
        }
    }
}

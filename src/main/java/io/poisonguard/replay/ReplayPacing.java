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
 * When a replay may go out: spaced on this instance by {@code replay.rate} (a {@link Pacer}), and counted across the fleet per
 * second ({@link ReplayQuota}), so N instances replaying at once do not send N times the rate.
 *
 * <p>Second k of the epoch allows {@code floor((k+1)·rate) − floor(k·rate)} sends: the rate itself when it is whole, else
 * alternately the whole numbers around it (2.5/s: 2, 3, 2, 3 …; 0.25/s: one send every fourth second), so no second ever
 * carries more than the rate rounded up. A replay waits at most {@link #MAX_WAIT} for its place (a wait longer than the
 * dead-letter copies are held would show them again mid-replay): past it, it is not sent. When the count does not answer
 * (or answers an error), the replay goes out paced by this instance alone (said at WARN once a minute): an outage of the
 * count must not stop an operator's replay at 3 a.m.
 */
final class ReplayPacing {
    private static final Logger LOG = Logger.getLogger(ReplayPacing.class);
    /** The longest a replay waits for the fleet's count; below the 60 s the dead-letter scan holds a copy. */
    static final Duration MAX_WAIT = Duration.ofSeconds(30);
    private static final Duration WARN_EVERY = Duration.ofMinutes(1);
    /** How long a second's count is kept (it is read only during that second). */
    private static final Duration KEEP_COUNT = Duration.ofHours(1);

    private final Pacer local;
    private final ReplayQuota fleet;
    private final Clock clock;
    private final double rate;
    private volatile Instant warnedAt = Instant.MIN;
    private final Duration maxWait;

    ReplayPacing(double rate, ReplayQuota fleet, Clock clock) {
        this(rate, fleet, clock, MAX_WAIT);
    }

    /** As above, waiting at most {@code maxWait} in all for a place. */
    ReplayPacing(double rate, ReplayQuota fleet, Clock clock, Duration maxWait) {
        this.local = new Pacer(rate);
        this.fleet = fleet;
        this.clock = clock;
        this.rate = rate;
        this.maxWait = maxWait;
    }

    /** How many sends second {@code second} of the epoch allows across the fleet. */
    int limit(long second) {
        return (int) (Math.floor((second + 1) * rate + 1e-9) - Math.floor(second * rate + 1e-9));
    }

    /**
     * Waits until this instance's pace and the fleet's count both let one more replay go; false when they did not within the
     * longest wait, {@link #MAX_WAIT} in all (nothing may be sent then): replays queued on this instance count toward it.
     */
    boolean acquire() throws InterruptedException {
        Instant giveUp = clock.instant().plus(maxWait);
        if (!local.tryAcquire(maxWait)) {
            return false;
        }
        while (true) {
            Instant now = clock.instant();
            long second = now.getEpochSecond();
            int limit = limit(second);
            try {
                if (limit > 0 && fleet.claim(second, limit, now.plus(KEEP_COUNT))) {
                    return true;
                }
            } catch (RuntimeException down) {
                if (warnedAt.plus(WARN_EVERY).isBefore(now)) {
                    warnedAt = now;
                    LOG.warnf("The fleet's replay count did not answer (%s); replays are paced by each instance alone meanwhile",
                            down instanceof StoreUnavailable ? down.getMessage() : down.getClass().getSimpleName());
                }
                return true;
            }
            if (!now.isBefore(giveUp)) {
                return false;
            }
            // Full: the next second, with a few milliseconds of spread so the instances waiting do not all ask at once.
            long nextMillis = (second + 1) * 1000L - now.toEpochMilli() + ThreadLocalRandom.current().nextLong(20);
            TimeUnit.MILLISECONDS.sleep(Math.max(1, nextMillis));
        }
    }
}

package io.poisonguard.ladder;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * The delay schedule of one failure class: the n-th retry waits at most
 * {@code min(cap, base * multiplier^(n-1), 43,200 s)}, spread by {@link Jitter}.
 */
public record Ladder(Duration base, double multiplier, Duration cap, Jitter jitter) {

    /**
     * SQS refuses a visibility timeout above 12 hours (ChangeMessageVisibility, 43,200 s). The
     * emulator accepts more, so the limit is enforced here, not left to the server.
     */
    public static final Duration SQS_MAX_VISIBILITY = Duration.ofSeconds(43_200);

    public Ladder {
        if (base == null || base.isNegative()) {
            throw new IllegalArgumentException("base must be zero or positive");
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier must be a finite number >= 1, was " + multiplier);
        }
        if (cap == null || cap.isNegative()) {
            throw new IllegalArgumentException("cap must be zero or positive");
        }
        if (cap.compareTo(SQS_MAX_VISIBILITY) > 0) {
            throw new IllegalArgumentException("cap must not exceed 43200s (the SQS visibility limit), was " + cap.toSeconds() + "s");
        }
        if (jitter == null) {
            throw new IllegalArgumentException("jitter is required");
        }
    }

    /** The largest delay retry {@code retry} (1-based) can get. */
    public Duration ceiling(int retry) {
        if (retry < 1) {
            throw new IllegalArgumentException("retry is 1-based, was " + retry);
        }
        double millis = base.toMillis() * Math.pow(multiplier, retry - 1);
        long limit = Math.min(cap.toMillis(), SQS_MAX_VISIBILITY.toMillis());
        return Duration.ofMillis(millis >= limit ? limit : (long) millis);
    }

    /** The delay for retry {@code retry} (1-based), drawn from {@code random}. */
    public Duration delay(int retry, RandomGenerator random) {
        long ceiling = ceiling(retry).toMillis();
        long millis = switch (jitter) {
            case FULL -> ceiling == 0 ? 0 : random.nextLong(ceiling + 1);
            case EQUAL -> ceiling / 2 + (ceiling / 2 == 0 ? 0 : random.nextLong(ceiling / 2 + 1));
            case NONE -> ceiling;
        };
        return Duration.ofMillis(millis);
    }

    /** The smallest delay retry {@code retry} can get. */
    public Duration floor(int retry) {
        long ceiling = ceiling(retry).toMillis();
        return switch (jitter) {
            case FULL -> Duration.ZERO;
            case EQUAL -> Duration.ofMillis(ceiling / 2);
            case NONE -> Duration.ofMillis(ceiling);
        };
    }
}

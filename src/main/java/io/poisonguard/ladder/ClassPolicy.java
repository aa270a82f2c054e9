package io.poisonguard.ladder;


import java.time.Duration;
import java.util.Optional;

/**
 * Limits of one failure class: after {@code maxAttempts} failures of this class the job is
 * quarantined, unless {@code maxElapsed} is set and has not yet passed since the job was first seen
 * (a budget in time as well as in count: a blip of a few minutes must not spend five quick attempts);
 * between them it waits on {@code ladder}; past {@code cutoff} (from the job's first receive) it is
 * quarantined rather than retried.
 */
public record ClassPolicy(int maxAttempts, Ladder ladder, Optional<Duration> cutoff, Optional<Duration> maxElapsed) {
    public ClassPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
        if (maxElapsed.isPresent() && (maxElapsed.get().isNegative() || maxElapsed.get().isZero())) {
            throw new IllegalArgumentException("maxElapsed must be positive, was " + maxElapsed.get());
        }
    }

    /** A budget in count only. */
    public ClassPolicy(int maxAttempts, Ladder ladder, Optional<Duration> cutoff) {
        this(maxAttempts, ladder, cutoff, Optional.empty());
    }
}

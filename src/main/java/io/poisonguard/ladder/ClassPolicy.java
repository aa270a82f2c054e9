package io.poisonguard.ladder;


import java.time.Duration;
import java.util.Optional;

/**
 * Limits of one failure class: after {@code maxAttempts} failures of this class the job is
 * quarantined; between them it waits on {@code ladder}; past {@code cutoff} (measured from the job's
 * first receive) it is quarantined rather than retried.
 */
public record ClassPolicy(int maxAttempts, Ladder ladder, Optional<Duration> cutoff) {
    public ClassPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
    }
}

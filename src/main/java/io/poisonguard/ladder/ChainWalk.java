package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.random.RandomGenerator;

/**
 * How a chain of one failure class moves from attempt to attempt, the way {@code Decisions.fail}
 * moves a job: attempt {@code k} fails {@code attemptTime} after it started; at the attempt limit the
 * job is quarantined; otherwise retry {@code k}'s delay is drawn, and if the next start would lie past
 * the cutoff the job is quarantined, past the queue retention SQS deletes it, else attempt
 * {@code k+1} starts then. Both windows count from the first receive; "past" is strictly after, as in
 * {@code Decisions}.
 */
public record ChainWalk(ClassPolicy policy, Duration retention, Duration attemptTime) {
    public ChainWalk {
        if (retention == null || retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("retention must be positive");
        }
        if (attemptTime == null || attemptTime.isNegative()) {
            throw new IllegalArgumentException("attemptTime must be zero or positive");
        }
    }

    /** Walks a chain whose retry {@code n} (1-based) waits {@code delayOfRetry.apply(n)}. */
    public Chain walk(IntFunction<Duration> delayOfRetry) {
        List<Duration> starts = new ArrayList<>();
        Duration start = Duration.ZERO;
        for (int attempt = 1; ; attempt++) {
            starts.add(start);
            if (attempt >= policy.maxAttempts()) {
                return new Chain(starts, StopCondition.ATTEMPT_LIMIT);
            }
            Duration next = start.plus(attemptTime).plus(delayOfRetry.apply(attempt));
            if (policy.cutoff().isPresent() && next.compareTo(policy.cutoff().get()) > 0) {
                return new Chain(starts, StopCondition.CUTOFF);
            }
            if (next.compareTo(retention) > 0) {
                return new Chain(starts, StopCondition.RETENTION);
            }
            start = next;
        }
    }

    /** The fastest possible climb: every delay draws its floor ("zero jitter"). No chain gets further. */
    public Chain fastest() {
        return walk(policy.ladder()::floor);
    }

    /** The slowest possible climb: every delay draws its ceiling. Every chain gets at least this far. */
    public Chain slowest() {
        return walk(policy.ladder()::ceiling);
    }

    /** A chain with live jitter, drawn the way the service draws its delays. */
    public Chain drawn(RandomGenerator random) {
        return walk(retry -> policy.ladder().delay(retry, random));
    }
}

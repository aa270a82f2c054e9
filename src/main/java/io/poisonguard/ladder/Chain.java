package io.poisonguard.ladder;

import java.time.Duration;
import java.util.List;

/**
 * One walk of a failure class's retry chain: when each attempt that ran started (measured from the
 * first receive, attempt 1 at zero) and what stopped the chain after the last of them.
 */
public record Chain(List<Duration> starts, StopCondition stop) {
    public Chain {
        starts = List.copyOf(starts);
        if (starts.isEmpty()) {
            throw new IllegalArgumentException("a chain runs at least attempt 1");
        }
    }

    /** The last attempt that ran. */
    public int lastAttempt() {
        return starts.size();
    }

    /**
     * The last attempt whose failure still got a retry scheduled (seed 002's "last attempt
     * scheduled"); 0 when attempt 1 already stopped the chain.
     */
    public int lastScheduled() {
        return starts.size() - 1;
    }

    /** When {@code attempt} (1-based, at most {@link #lastAttempt()}) started. */
    public Duration start(int attempt) {
        return starts.get(attempt - 1);
    }
}

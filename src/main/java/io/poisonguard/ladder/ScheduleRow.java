package io.poisonguard.ladder;

import java.time.Duration;
import java.util.Optional;

/**
 * One attempt of the zero-jitter chain: the range its retry delay is drawn from, when it starts
 * (measured from the first receive) and, on the last row, what stopped the chain.
 */
public record ScheduleRow(int attempt, Duration floor, Duration ceiling, Duration start, Optional<StopCondition> stop) {

    /** True when this attempt's failure got a retry scheduled. */
    public boolean retried() {
        return stop.isEmpty();
    }
}

package io.poisonguard.pacing;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

/** A pacer's clock for tests: time moves only when a caller sleeps (by the sleep plus a chosen lateness) or the test moves it. */
final class FakeTime implements Pacer.Time {
    long now = 1_000_000_000L;
    final List<Long> sleeps = new ArrayList<>();
    private final LongUnaryOperator lateness;

    FakeTime() {
        this(slept -> 0);
    }

    /** {@code lateness}: how much later than asked a sleeper wakes, from what it asked. */
    FakeTime(LongUnaryOperator lateness) {
        this.lateness = lateness;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void sleepNanos(long nanos) {
        sleeps.add(nanos);
        now += nanos + lateness.applyAsLong(nanos);
    }

    void advance(long nanos) {
        now += nanos;
    }
}

package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What the retry ladder of one failure class does: the zero-jitter schedule, the slowest climb, the
 * same chain walked many times with live jitter, and whether the attempt limit is ever reached.
 */
public record LadderReport(FailureClass failureClass, ClassPolicy policy, Duration retention, Duration attemptTime,
                           List<ScheduleRow> schedule, Chain fastest, Chain slowest, SimulatedChains simulated, Reach reach) {
    public LadderReport {
        schedule = List.copyOf(schedule);
    }

    /** The attempt limit can never be reached: something else always stops the chain first. */
    public boolean dead() {
        return reach == Reach.NEVER;
    }

    /** When attempt {@code max-attempts} would start if no window stopped the fastest climb. */
    public Duration earliestStartOfLimit() {
        Duration total = Duration.ZERO;
        for (int retry = 1; retry < policy.maxAttempts(); retry++) {
            total = total.plus(attemptTime).plus(policy.ladder().floor(retry));
        }
        return total;
    }

    /** One sentence on the attempt limit, without configuration keys (callers prefix the key). */
    public String verdict() {
        int limit = policy.maxAttempts();
        return switch (reach) {
            case NEVER -> "attempt " + limit + " can never be reached: even the fastest climb is stopped by " + window(fastest.stop())
                    + " after attempt " + fastest.lastAttempt() + " (attempt " + limit + " could start "
                    + ElapsedText.of(earliestStartOfLimit()) + " after the first receive at the earliest)";
            case SOMETIMES -> "attempt " + limit + " is reached by only " + percent(simulated.share(simulated.reachedLimit()))
                    + String.format(Locale.ROOT, " of %,d simulated chains (the zero-jitter climb reaches it)", simulated.chains())
                    + "; the slowest climb is stopped by " + window(slowest.stop()) + " after attempt " + slowest.lastAttempt();
            case ALWAYS -> "attempt " + limit + " is reached by every chain: even the slowest climb starts it "
                    + ElapsedText.of(slowest.start(limit)) + " after the first receive";
        };
    }

    /** The window a stop condition stands for, with its length. */
    public String window(StopCondition stop) {
        return switch (stop) {
            case CUTOFF -> "the cutoff of " + DurationText.human(policy.cutoff().orElseThrow());
            case RETENTION -> "the queue retention of " + DurationText.human(retention);
            case ATTEMPT_LIMIT -> "the attempt limit of " + policy.maxAttempts();
        };
    }

    static String percent(double share) {
        return String.format(Locale.ROOT, "%.2f%%", share * 100);
    }
}

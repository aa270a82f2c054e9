package io.poisonguard.ladder;

import java.time.Duration;
import java.util.Optional;

/**
 * Proves an attempt limit can be reached. The last attempt of a chain starts, at the latest, after
 * every earlier attempt ran for its whole lease and waited the longest delay its ladder allows. If
 * that moment lies beyond the message's retention or the class's cutoff, the limit is a dead setting:
 * something else always stops the chain first, and anyone tuning the limit is turning a dial the
 * system never reads (seed 002's MaxAttempts=10 under a 16 h cutoff).
 */
public final class Reachability {
    private Reachability() {
    }

    /** Latest start of attempt {@code maxAttempts}, measured from the first receive. */
    public static Duration worstCaseStartOfLastAttempt(Ladder ladder, int maxAttempts, Duration attemptLease) {
        Duration total = Duration.ZERO;
        for (int retry = 1; retry < maxAttempts; retry++) {
            total = total.plus(attemptLease).plus(ladder.ceiling(retry));
        }
        return total;
    }

    /** Earliest start of attempt {@code maxAttempts}: handlers fail at once and jitter draws its floor. */
    public static Duration bestCaseStartOfLastAttempt(Ladder ladder, int maxAttempts) {
        Duration total = Duration.ZERO;
        for (int retry = 1; retry < maxAttempts; retry++) {
            total = total.plus(ladder.floor(retry));
        }
        return total;
    }

    /**
     * Why {@code maxAttempts} cannot be reached within {@code window}, or empty when it always can.
     */
    public static Optional<String> unreachable(Ladder ladder, int maxAttempts, Duration attemptLease, Duration window, String windowName) {
        Duration latest = worstCaseStartOfLastAttempt(ladder, maxAttempts, attemptLease);
        if (latest.compareTo(window) < 0) {
            return Optional.empty();
        }
        Duration earliest = bestCaseStartOfLastAttempt(ladder, maxAttempts);
        String never = earliest.compareTo(window) >= 0 ? "can never be reached" : "is not always reached";
        return Optional.of("attempt " + maxAttempts + " " + never + ": it may start " + human(latest)
                + " after the first receive, beyond the " + windowName + " of " + human(window));
    }

    public static String human(Duration d) {
        long s = d.toSeconds();
        if (s < 120) {
            return s + "s";
        }
        if (s < 3600) {
            return (s / 60) + "m" + (s % 60 == 0 ? "" : (s % 60) + "s");
        }
        return (s / 3600) + "h" + ((s % 3600) / 60 == 0 ? "" : ((s % 3600) / 60) + "m");
    }
}

package io.poisonguard.ladder;

import java.time.Duration;

/** Writes a configured duration the way it is usually typed: {@code 45s}, {@code 5m}, {@code 16h}. */
public final class DurationText {
    private DurationText() {
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

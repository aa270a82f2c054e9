package io.poisonguard.ladder;

import java.time.Duration;
import java.util.Locale;

/** Writes an elapsed time as a clock reading, {@code 10:35:00} (hours may pass 24), as seed 002's tables do. */
public final class ElapsedText {
    private ElapsedText() {
    }

    public static String of(Duration d) {
        long s = d.toSeconds();
        String clock = String.format(Locale.ROOT, "%02d:%02d:%02d", s / 3600, (s % 3600) / 60, s % 60);
        int millis = d.toMillisPart();
        return millis == 0 ? clock : clock + String.format(Locale.ROOT, ".%03d", millis);
    }
}

package io.poisonguard.observability;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Admission rejections by reason, per minute, for the last {@link #MINUTES} minutes on this instance: what the
 * console charts (a rising rate of one reason is a product signal: a producer shipped a new shape). Bounded: at
 * most {@link #MAX_REASONS} reasons (reasons are the service's own names, a handful).
 */
public final class RejectionHistory {
    public static final int MINUTES = 60;
    static final int MAX_REASONS = 50;

    private final Map<String, long[]> counts = new LinkedHashMap<>();
    private long currentMinute = -1;

    public synchronized void record(String reason, Instant at) {
        roll(at);
        long[] row = counts.get(reason);
        if (row == null) {
            if (counts.size() >= MAX_REASONS) {
                return;
            }
            row = new long[MINUTES];
            counts.put(reason, row);
        }
        row[(int) (currentMinute % MINUTES)]++;
    }

    /** The last {@link #MINUTES} minutes, oldest first: per reason, one count per minute. */
    public synchronized Snapshot snapshot(Instant now) {
        roll(now);
        Map<String, long[]> out = new TreeMap<>();
        counts.forEach((reason, row) -> {
            long[] ordered = new long[MINUTES];
            for (int i = 0; i < MINUTES; i++) {
                ordered[i] = row[(int) ((currentMinute - (MINUTES - 1) + i) % MINUTES + MINUTES) % MINUTES];
            }
            out.put(reason, ordered);
        });
        return new Snapshot(Instant.ofEpochSecond((currentMinute - (MINUTES - 1)) * 60), out);
    }

    /** Counts per minute from {@code firstMinute}, by reason. */
    public record Snapshot(Instant firstMinute, Map<String, long[]> byReason) {
    }

    /** Clears the minutes that passed since the last record. */
    private void roll(Instant at) {
        long minute = at.getEpochSecond() / 60;
        if (currentMinute < 0) {
            currentMinute = minute;
            return;
        }
        for (long m = currentMinute + 1; m <= minute && m <= currentMinute + MINUTES; m++) {
            int slot = (int) (m % MINUTES);
            counts.values().forEach(row -> row[slot] = 0);
        }
        currentMinute = Math.max(currentMinute, minute);
    }
}

package io.poisonguard.owners;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The review cadence of a quarantined job: acknowledged within its owner's {@code acknowledge-within}, resolved
 * (replayed or discarded) within {@code resolve-within}, both counted from quarantine. A stage past its deadline
 * is escalated once.
 */
public enum ReviewStage {
    ACKNOWLEDGE,
    RESOLVE;

    public String key() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The stages of a record that are overdue now and not yet escalated.
     *
     * @param acknowledged whether someone acknowledged it
     * @param settled whether it left quarantine (replayed, resolved, unrecoverable)
     */
    public static List<ReviewStage> overdue(Owner owner, Instant quarantinedAt, boolean acknowledged, boolean settled, Set<String> escalated,
                                            Instant now) {
        List<ReviewStage> out = new ArrayList<>();
        if (settled) {
            return out;
        }
        if (!acknowledged && passed(quarantinedAt, owner.acknowledgeWithin(), now) && !escalated.contains(ACKNOWLEDGE.key())) {
            out.add(ACKNOWLEDGE);
        }
        if (passed(quarantinedAt, owner.resolveWithin(), now) && !escalated.contains(RESOLVE.key())) {
            out.add(RESOLVE);
        }
        return out;
    }

    private static boolean passed(Instant from, Duration within, Instant now) {
        return now.isAfter(from.plus(within));
    }
}

package io.poisonguard.quarantine;

import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * The people side of a quarantine record: who owns it (and whether only by default, no owner matching), whether
 * someone acknowledged it, who it is assigned to, the notes left on it (scrubbed, each also audited) and which
 * review stages were escalated (each at most once).
 */
public record Triage(String owner, boolean ownerDefaulted, String acknowledgedBy, Instant acknowledgedAt, String assignee, List<Note> notes,
                     Set<String> escalated) {
    /** Most notes one record keeps. */
    public static final int MAX_NOTES = 100;

    public Triage {
        notes = notes == null ? List.of() : List.copyOf(notes);
        escalated = escalated == null ? Set.of() : Set.copyOf(escalated);
    }

    public static Triage owned(String owner, boolean defaulted) {
        return new Triage(owner, defaulted, null, null, null, List.of(), Set.of());
    }

    /**
     * The triage of a quarantine reopened over this one (its payload, concluded gone, turned up): owned afresh, neither
     * acknowledged, assigned nor escalated, since the job waits again; the notes stay, they are the job's story.
     */
    public Triage reopened(String newOwner, boolean defaulted) {
        return new Triage(newOwner, defaulted, null, null, null, notes, Set.of());
    }

    /** The triage of a reopen's record over {@code replaced}, the record read before it (none: owned afresh). */
    public static Triage reopenedOver(java.util.Optional<QuarantineRecord> replaced, String owner, boolean defaulted) {
        return replaced.map(r -> r.triage().reopened(owner, defaulted)).orElseGet(() -> owned(owner, defaulted));
    }

    /** A note an operator left: when, who, what (scrubbed). */
    public record Note(Instant at, String by, String text) {
    }

    /** Where the record stands for the people handling it, given its status. */
    public TriageState state(QuarantineStatus status) {
        return switch (status) {
            case REPLAYING, REPLAYED -> TriageState.REPLAYING;
            case RESOLVED, UNRECOVERABLE -> TriageState.RESOLVED;
            case QUARANTINED -> acknowledgedBy == null ? TriageState.NEW : TriageState.ACKNOWLEDGED;
        };
    }
}

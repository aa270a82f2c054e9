package io.poisonguard.owners;

import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who owns a quarantined job: the owner that names the job most specifically (job type and tenant, over job type
 * or tenant alone; a tie goes to the first name in alphabetical order), else the default owner, in which case the
 * assignment is flagged so the gap in the map shows.
 */
public final class OwnerMap {
    private final Map<String, Owner> owners = new LinkedHashMap<>();
    private final Owner fallback;

    public OwnerMap(List<Owner> owners, Owner fallback) {
        owners.stream().sorted(Comparator.comparing(Owner::name)).forEach(o -> this.owners.put(o.name(), o));
        this.fallback = fallback;
        if (this.owners.containsKey(fallback.name())) {
            throw new IllegalArgumentException("the default owner " + fallback.name() + " is also a named owner");
        }
    }

    /** An owner and whether it was assigned only because nobody else matched. */
    public record Assignment(String owner, boolean defaulted) {
    }

    public Assignment assign(String tenant, String jobType) {
        Owner best = null;
        int bestScore = -1;
        for (Owner o : owners.values()) {
            int score = o.match(tenant, jobType);
            if (score > bestScore) {
                best = o;
                bestScore = score;
            }
        }
        return best == null ? new Assignment(fallback.name(), true) : new Assignment(best.name(), false);
    }

    /** The owner by name; an unknown name (an owner since removed from configuration) gets the default's deadlines. */
    public Owner owner(String name) {
        return Optional.ofNullable(owners.get(name)).orElse(fallback);
    }

    public Owner fallback() {
        return fallback;
    }

    public List<Owner> all() {
        return java.util.stream.Stream.concat(owners.values().stream(), java.util.stream.Stream.of(fallback)).toList();
    }

    /**
     * Owners that share a review stage's deadline. The default owner's group ({@code allBut}) stands for every record whose
     * owner is not named in another group: the default owner's, those of owners with its deadline, and those of no owner or
     * of one since removed from configuration, which take the default's deadlines.
     */
    public record DeadlineGroup(Duration within, java.util.Set<String> owners, boolean allBut) {
        public DeadlineGroup {
            owners = java.util.Set.copyOf(owners);
        }
    }

    /**
     * The owners grouped by their deadline for one stage ({@code deadline}: acknowledge or resolve), one group per distinct
     * deadline, shortest first: so a check can read each group's records past its own deadline, and records not yet due
     * for a slow owner do not stand before a faster owner's.
     */
    public List<DeadlineGroup> byDeadline(java.util.function.Function<Owner, Duration> deadline) {
        Duration fallbackWithin = deadline.apply(fallback);
        Map<Duration, java.util.Set<String>> named = new java.util.TreeMap<>();
        for (Owner o : owners.values()) {
            Duration within = deadline.apply(o);
            if (!within.equals(fallbackWithin)) {
                named.computeIfAbsent(within, d -> new java.util.TreeSet<>()).add(o.name());
            }
        }
        java.util.Set<String> elsewhere = new java.util.TreeSet<>();
        named.values().forEach(elsewhere::addAll);
        List<DeadlineGroup> groups = new java.util.ArrayList<>();
        named.forEach((within, names) -> groups.add(new DeadlineGroup(within, names, false)));
        groups.add(new DeadlineGroup(fallbackWithin, elsewhere, true));
        groups.sort(Comparator.comparing(DeadlineGroup::within));
        return List.copyOf(groups);
    }
}

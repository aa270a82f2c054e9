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

    /** The shortest acknowledge deadline of any owner: no record younger than this can be overdue. */
    public Duration earliestDeadline() {
        return all().stream().map(Owner::acknowledgeWithin).min(Comparator.naturalOrder()).orElseThrow();
    }

    /** The shortest resolve deadline of any owner: no record quarantined more recently can be overdue for resolution. */
    public Duration earliestResolveDeadline() {
        return all().stream().map(Owner::resolveWithin).min(Comparator.naturalOrder()).orElseThrow();
    }
}

package io.poisonguard.chaos;

import java.util.Set;

/** What a chaos job is made to do, and so what its fate should be. */
public enum JobKind {
    /** A v3 permit report whose provider call works: must complete. */
    HEALTHY("healthy", false, Set.of()),
    /** The provider answers 503 twice (TRANSIENT), then works: must complete. */
    TRANSIENT("transient", false, Set.of()),
    /** The provider answers 429 once (THROTTLED), then works: must complete. */
    THROTTLED("throttled", false, Set.of()),
    /** A schema v1 body while the legacy reader is off: must be quarantined, PERMANENT. */
    POISON("poison", true, Set.of("PERMANENT")),
    /** The provider call hangs: must be quarantined once the per-attempt deadline fires, TIMEOUT. */
    HANG("hang", true, Set.of("TIMEOUT")),
    /** The provider call kills the JVM (oom or halt): must be quarantined as a crash. */
    CRASH("crash", true, Set.of("CRASH", "CRASH_AMBIGUOUS"));

    private final String label;
    private final boolean poison;
    private final Set<String> expectedClasses;

    JobKind(String label, boolean poison, Set<String> expectedClasses) {
        this.label = label;
        this.poison = poison;
        this.expectedClasses = expectedClasses;
    }

    public String label() {
        return label;
    }

    /** Poison kinds must end quarantined and never complete; the others must complete and never be quarantined. */
    public boolean poison() {
        return poison;
    }

    /** The failure classes a quarantine of this kind is expected to carry. */
    public Set<String> expectedClasses() {
        return expectedClasses;
    }
}

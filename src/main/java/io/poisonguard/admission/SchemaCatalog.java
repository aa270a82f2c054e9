package io.poisonguard.admission;

import java.util.Optional;
import java.util.Set;

/** Which job types exist and which schema versions each one knows. */
public interface SchemaCatalog {
    /** The schema versions known for {@code jobType}; empty when no handler takes that type. */
    Optional<Set<Integer>> knownVersions(String jobType);
}

package io.poisonguard.quarantine;

import java.time.Instant;

/** One replay of a quarantined job, as its quarantine record remembers it. */
public record ReplayEntry(int generation, Instant at, String actor, String reason, String outcome) {
}

package io.poisonguard.quarantine;

/** A quarantined job's triage: NEW until someone acknowledges it, then REPLAYING or RESOLVED as operators act. */
public enum TriageState {
    NEW,
    ACKNOWLEDGED,
    REPLAYING,
    RESOLVED
}

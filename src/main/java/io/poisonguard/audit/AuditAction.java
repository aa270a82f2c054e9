package io.poisonguard.audit;

/** What an operator did. */
public enum AuditAction {
    REPLAY,
    BULK_REPLAY,
    RESOLVE,
    VIEW_PAYLOAD,
    TENANT_CHANGE,
    /** An operator cleared the systemic-failure guard: consumption resumes. */
    RESUME_CONSUMPTION
}

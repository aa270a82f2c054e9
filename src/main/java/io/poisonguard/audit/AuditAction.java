package io.poisonguard.audit;

/** What an operator did. */
public enum AuditAction {
    REPLAY,
    BULK_REPLAY,
    RESOLVE,
    VIEW_PAYLOAD,
    TENANT_CHANGE,
    /** An operator cleared the systemic-failure guard: consumption resumes. */
    RESUME_CONSUMPTION,
    /** Triage: someone took note of a quarantined job. */
    ACKNOWLEDGE,
    /** Triage: the job was assigned to someone (or unassigned). */
    ASSIGN,
    /** Triage: a note was left on the job. */
    NOTE,
    /** An overdue job was escalated to its owner (by the service, once per review stage). */
    ESCALATE
}

package io.poisonguard.audit;

import java.util.List;

/** The append-only audit trail. Entries are never updated or deleted by the service. */
public interface AuditLog {
    void append(AuditEntry entry);

    /** A job's entries, oldest first. */
    List<AuditEntry> forJob(String jobId, int limit);

    /** The newest entries across jobs, newest first. */
    List<AuditEntry> recent(int limit);
}

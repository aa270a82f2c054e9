package io.poisonguard.audit;

import java.util.List;
import java.util.Optional;

/** The append-only audit trail. Entries are never updated or deleted by the service. */
public interface AuditLog {
    /** How far back a listing across tenants reaches; older entries stay readable by job id. */
    int LISTING_DAYS = 366;

    /**
     * The key of actions on consumption rather than on a job. Its newest {@link AuditAction#RESUME_CONSUMPTION} entry is
     * also how every worker learns of a resume that one of them answered.
     */
    String CONSUMPTION = "system:consumption";

    void append(AuditEntry entry);

    /** A job's newest {@code limit} entries, oldest first. */
    default List<AuditEntry> forJob(String jobId, int limit) {
        return forJob(jobId, e -> true, limit);
    }

    /**
     * A job's newest {@code limit} entries that {@code keep} accepts, oldest first: those it refuses (another tenant's
     * entries under the same job id, say) do not take a place.
     */
    List<AuditEntry> forJob(String jobId, java.util.function.Predicate<AuditEntry> keep, int limit);

    /**
     * The newest {@code limit} entries, oldest first, of the jobs with this id of {@code tenants} (a null member: the
     * job of no tenant). Each is read as that job's own, so no other tenant's entries under the same job id, however
     * many, can push them out (only entries written by a release before tenant-scoped keys are read by id and filtered).
     */
    List<AuditEntry> forTenantsJob(java.util.Collection<String> tenants, String jobId, int limit);

    /**
     * The newest entries, newest first, one page at a time: of one tenant when {@code tenant} is given
     * (read through an index on tenant and time), else of every tenant (an index on day and time, walked
     * back day by day, a bounded number of days per call). Never a scan of the table.
     *
     * @throws IllegalArgumentException when the cursor is not one this listing gave
     */
    AuditPage recent(Optional<String> tenant, int limit, Optional<String> cursor);

    /** The first page of {@link #recent(Optional, int, Optional)} across tenants. */
    default List<AuditEntry> recent(int limit) {
        return recent(Optional.empty(), limit, Optional.empty()).items();
    }
}

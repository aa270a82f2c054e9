package io.poisonguard.tenants;

import java.time.Instant;
import java.util.Set;

/** A tenant directory entry: its status and the job types it is permitted to run. */
public record Tenant(String tenant, TenantStatus status, Set<String> jobTypes, Instant updatedAt, String updatedBy) {
    public Tenant {
        jobTypes = Set.copyOf(jobTypes);
    }

    public boolean mayRun(String jobType) {
        return status == TenantStatus.ACTIVE && jobTypes.contains(jobType);
    }
}

package io.poisonguard.tenants;

import java.util.Optional;

/** Who may run what, consulted when a job is replayed and again when the replayed copy is processed. */
public interface TenantDirectory {
    Optional<Tenant> find(String tenant);

    void put(Tenant tenant);

    /** Why {@code tenant} may not run {@code jobType} now, or empty when it may. */
    default Optional<String> refusal(String tenant, String jobType) {
        if (tenant == null) {
            return Optional.of("the job named no valid tenant, so no tenant may run it; resolve it, or have its producer send it"
                    + " again with its tenant");
        }
        Optional<Tenant> t = find(tenant);
        if (t.isEmpty()) {
            return Optional.of("tenant '" + tenant + "' is not in the tenant directory");
        }
        if (t.get().status() != TenantStatus.ACTIVE) {
            return Optional.of("tenant '" + tenant + "' is " + t.get().status());
        }
        if (!t.get().jobTypes().contains(jobType)) {
            return Optional.of("tenant '" + tenant + "' is not permitted to run job type '" + jobType + "'");
        }
        return Optional.empty();
    }
}

package io.poisonguard.owners;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * A team that owns quarantined work: the job types and tenants it answers for (empty: any), and how soon it must
 * acknowledge and resolve what lands in quarantine. Its alert and escalation routes are configuration, kept
 * apart from this pure description.
 */
public record Owner(String name, Set<String> jobTypes, Set<String> tenants, Duration acknowledgeWithin, Duration resolveWithin) {
    public Owner {
        Objects.requireNonNull(name, "name");
        jobTypes = Set.copyOf(jobTypes);
        tenants = Set.copyOf(tenants);
        if (acknowledgeWithin.isNegative() || acknowledgeWithin.isZero() || resolveWithin.compareTo(acknowledgeWithin) < 0) {
            throw new IllegalArgumentException("owner " + name + ": acknowledge-within must be positive and at most resolve-within");
        }
    }

    /** How specifically this owner names the job: 2 for job type and tenant, 1 for one of them, -1 when it does not match. */
    int match(String tenant, String jobType) {
        boolean typeOk = jobTypes.isEmpty() || (jobType != null && jobTypes.contains(jobType));
        boolean tenantOk = tenants.isEmpty() || (tenant != null && tenants.contains(tenant));
        if (!typeOk || !tenantOk || (jobTypes.isEmpty() && tenants.isEmpty())) {
            return -1;
        }
        return (jobTypes.isEmpty() ? 0 : 1) + (tenants.isEmpty() ? 0 : 1);
    }
}

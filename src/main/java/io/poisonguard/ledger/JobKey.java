package io.poisonguard.ledger;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A job's identity: its tenant and its job id. Two tenants may use the same job id; their jobs are two
 * jobs, with their own ledger item, effects, quarantine record and kept payload. {@code tenant} is null
 * for a copy that names no valid tenant (it is quarantined at admission, in a scope of its own).
 *
 * <p>In storage the two are one string, {@code <tenant>/<jobId>}: a valid tenant cannot hold a {@code /},
 * so the split is unambiguous; a copy without a valid tenant is stored under {@code /<jobId>}.
 */
public record JobKey(String tenant, String jobId) {
    /** What a tenant name may be: a letter or digit, then letters, digits, {@code .}, {@code _} or {@code -}; 64 at most. */
    /** A valid tenant, as a pattern (for documentation and tests; {@link #validTenant} checks it by hand). */
    static final Pattern TENANT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    public static final char SEPARATOR = '/';
    /** {@link #validTenant}'s rule in words, for the errors that refuse a tenant. */
    public static final String TENANT_RULE = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit";

    public JobKey {
        Objects.requireNonNull(jobId, "jobId");
        if (tenant != null && !validTenant(tenant)) {
            throw new IllegalArgumentException("not a valid tenant name (see JobKey.validTenant)");
        }
    }

    public static boolean validTenant(String tenant) {
        // The TENANT pattern, checked by hand: this runs several times for every message.
        if (tenant == null || tenant.isEmpty() || tenant.length() > 64 || !letterOrDigit(tenant.charAt(0))) {
            return false;
        }
        for (int i = 1; i < tenant.length(); i++) {
            char c = tenant.charAt(i);
            if (!letterOrDigit(c) && c != '.' && c != '_' && c != '-') {
                return false;
            }
        }
        return true;
    }

    private static boolean letterOrDigit(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    /** The key of a copy whose tenant attribute is {@code tenant}: scoped by it when it is valid, unscoped otherwise. */
    public static JobKey of(String tenant, String jobId) {
        return new JobKey(validTenant(tenant) ? tenant : null, jobId);
    }

    public static JobKey of(LedgerRecord r) {
        return of(r.tenant(), r.jobId());
    }

    /** The single string the tables are keyed by. */
    public String storage() {
        return (tenant == null ? "" : tenant) + SEPARATOR + jobId;
    }

    /** Whether {@code r} is this job's record (and not another tenant's job with the same id). */
    public boolean owns(LedgerRecord r) {
        return Objects.equals(tenant, validTenant(r.tenant()) ? r.tenant() : null) && jobId.equals(r.jobId());
    }

    /**
     * The key a stored item is under, from its key string and its {@code tenant} attribute: {@code <tenant>/<id>},
     * {@code /<id>} for a copy that named no valid tenant, or (an item from before scoping) the bare job id.
     */
    public static JobKey fromStorage(String storage, String tenantAttribute) {
        String scope = (validTenant(tenantAttribute) ? tenantAttribute : "") + SEPARATOR;
        if (validTenant(tenantAttribute) && storage.startsWith(scope)) {
            return new JobKey(tenantAttribute, storage.substring(scope.length()));
        }
        if (storage.charAt(0) == SEPARATOR) {
            return new JobKey(null, storage.substring(1));
        }
        return of(tenantAttribute, storage);
    }

    @Override
    public String toString() {
        return storage();
    }
}

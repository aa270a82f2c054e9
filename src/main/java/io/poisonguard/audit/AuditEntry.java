package io.poisonguard.audit;

import java.time.Instant;

/**
 * One operator action, append-only: who (token subject), what, why (their reason), which code
 * version acted, the job's generation and attempt number it produced, and the outcome. Never a
 * payload. {@code tenant} is the tenant the action concerned (null for actions on no tenant, such as
 * resuming consumption); an operator sees only entries of the tenants their token covers.
 */
public record AuditEntry(
        String jobId,
        String tenant,
        Instant at,
        String actor,
        AuditAction action,
        String reason,
        String codeVersion,
        Integer generation,
        Integer attempt,
        String outcome,
        String detail) {
}

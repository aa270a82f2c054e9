package io.poisonguard.audit;

import java.time.Instant;

/**
 * One operator action, append-only: who (token subject), what, why (their reason), which code
 * version acted, the job's generation and attempt number it produced, and the outcome. Never a
 * payload.
 */
public record AuditEntry(
        String jobId,
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

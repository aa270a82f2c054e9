package io.poisonguard.pipeline;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.audit.AuditPage;
import io.poisonguard.replay.CodeVersion;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The fleet view of the systemic guards: each worker's newest entry, trips after the newest resume only. */
class FleetGuardsTest {
    private static final Instant T = Instant.parse("2026-12-06T03:00:00Z");

    private static AuditEntry guard(String worker, AuditAction action, int second, String tenant) {
        return new AuditEntry(AuditLog.GUARD, tenant, T.plusSeconds(second), worker, action, null, "v", null, null,
                action == AuditAction.SYSTEMIC_TRIP ? "TRIPPED" : "CLEARED", "cause of " + worker);
    }

    @Test
    void aWorkerIsListedWhileItsNewestEntryIsATripAfterTheNewestResume() {
        List<AuditEntry> guards = List.of(
                guard("w1", AuditAction.SYSTEMIC_TRIP, 10, null), guard("w1", AuditAction.SYSTEMIC_CLEAR, 20, null),
                guard("w2", AuditAction.SYSTEMIC_CLEAR, 5, null), guard("w2", AuditAction.SYSTEMIC_TRIP, 30, null),
                guard("w3", AuditAction.SYSTEMIC_TRIP, 1, null),
                guard("w4", AuditAction.SYSTEMIC_TRIP, 40, "acme"));
        List<AuditEntry> consumption = List.of(new AuditEntry(AuditLog.CONSUMPTION, null, T.plusSeconds(2), "olga",
                AuditAction.RESUME_CONSUMPTION, "fixed", "v", null, null, "RESUMED", null));
        AuditLog log = new AuditLog() {
            @Override
            public void append(AuditEntry entry) {
                throw new AssertionError("read only");
            }

            @Override
            public List<AuditEntry> forJob(String jobId, Predicate<AuditEntry> keep, int limit) {
                throw new AssertionError("read by tenant");
            }

            @Override
            public List<AuditEntry> forTenantsJob(Collection<String> tenants, String jobId, int limit) {
                return jobId.equals(AuditLog.GUARD) ? guards : consumption;
            }

            @Override
            public AuditPage recent(Optional<String> tenant, int limit, Optional<String> cursor) {
                throw new AssertionError("not listed");
            }
        };

        List<FleetGuards.Tripped> tripped = new FleetGuards(log, "w0", new CodeVersion("v")).tripped();

        // w1 cleared; w3 tripped before the resume; w4's entry is a tenant's job's, not a worker's.
        assertEquals(List.of(new FleetGuards.Tripped("w2", T.plusSeconds(30), "cause of w2")), tripped);
    }
}

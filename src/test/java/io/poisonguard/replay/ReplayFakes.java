package io.poisonguard.replay;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.audit.AuditPage;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.tenants.Tenant;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.tenants.TenantStatus;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/** In-memory stand-ins for the operator actions' collaborators, shared by the replay tests. */
final class ReplayFakes {
    private ReplayFakes() {
    }

    /** Every tenant ACTIVE and permitted permit-report. */
    static TenantDirectory tenants() {
        return new TenantDirectory() {
            @Override
            public Optional<Tenant> find(String tenant) {
                return Optional.of(new Tenant(tenant, TenantStatus.ACTIVE, Set.of("permit-report"), Instant.now(), "root"));
            }

            @Override
            public void put(Tenant tenant) {
                throw new AssertionError("read only");
            }
        };
    }

    /** A permit-report job's record, quarantined at {@code then} with its dead-letter copy sent. */
    static QuarantineRecord record(JobKey key, Instant then) {
        return new QuarantineRecord(key.jobId(), key.tenant(), "permit-report", 1, FailureClass.PERMANENT, "PERMANENT limit reached", 1,
                Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), then, then, then,
                then.plus(Duration.ofDays(14)), "m-" + key.jobId(), QuarantineStatus.QUARANTINED, List.of(), null,
                DeadLetterCopy.sent("d-" + key.jobId()), null);
    }

    /** Finds what {@code find} gives, takes every status update; any other call fails the test. */
    static QuarantineStore quarantine(Function<JobKey, Optional<QuarantineRecord>> find) {
        return (QuarantineStore) Proxy.newProxyInstance(ReplayFakes.class.getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "find" -> find.apply((JobKey) args[0]);
                    case "updateStatus" -> true;
                    default -> throw new AssertionError("not expected: " + method.getName());
                });
    }

    /** A vault that answers {@code find} for every job (its entries are never kept or discarded here). */
    static PayloadVault vault(Function<JobKey, Optional<KeptPayload>> find) {
        return vault(find, key -> {
        });
    }

    /** A vault that answers {@code find} for every job and tells {@code discard} of each discard (which may throw). */
    static PayloadVault vault(Function<JobKey, Optional<KeptPayload>> find, java.util.function.Consumer<JobKey> discard) {
        return new PayloadVault() {
            @Override
            public boolean enabled() {
                return true;
            }

            @Override
            public void keep(KeptPayload payload) {
                throw new AssertionError("not kept here");
            }

            @Override
            public Optional<KeptPayload> find(JobKey key) {
                return find.apply(key);
            }

            @Override
            public void discard(JobKey key, int below) {
                discard.accept(key);
            }
        };
    }

    /** A dead-letter queue with no copy of any job. */
    static PayloadArchive emptyArchive() {
        return new PayloadArchive() {
            @Override
            public ArchiveScan find(JobKey key) {
                return new ArchiveScan(List.of(), true);
            }

            @Override
            public int delete(List<ArchivedMessage> copies) {
                return copies.size();
            }

            @Override
            public void release(List<ArchivedMessage> copies) {
            }

            @Override
            public boolean someHidden() {
                return false;
            }
        };
    }

    /** An audit trail that keeps its entries in {@code entries}, read back by job id. */
    static AuditLog audit(List<AuditEntry> entries) {
        return new AuditLog() {
            @Override
            public void append(AuditEntry entry) {
                entries.add(entry);
            }

            @Override
            public List<AuditEntry> forJob(String jobId, Predicate<AuditEntry> keep, int limit) {
                return entries.stream().filter(e -> e.jobId().equals(jobId)).filter(keep).toList();
            }

            @Override
            public List<AuditEntry> forTenantsJob(Collection<String> tenants, String jobId, int limit) {
                return forJob(jobId, e -> tenants.contains(e.tenant()), limit);
            }

            @Override
            public AuditPage recent(Optional<String> tenant, int limit, Optional<String> cursor) {
                throw new AssertionError("not listed");
            }
        };
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.replay.CodeVersion;
import io.poisonguard.systemic.SystemicWatch;
import jakarta.inject.Named;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The systemic guards of the whole fleet, as each worker records them: a worker writes an entry under
 * {@link AuditLog#GUARD} when its guard trips and when it clears, so that whichever worker answers {@code GET
 * /ops/consumption} can say which workers have stopped consuming. An operator's resume (through any worker) clears every
 * trip before it.
 *
 * <p>The entries are written in the background: a trip is decided on a worker's hot path, which waits for no table.
 */
@Singleton
public class FleetGuards {
    private static final Logger LOG = Logger.getLogger(FleetGuards.class);
    /** The newest entries read for the view: far more than a fleet's trips between two resumes. */
    static final int READ = 100;

    private final AuditLog audit;
    private final String workerId;
    private final CodeVersion codeVersion;

    public FleetGuards(AuditLog audit, @Named("worker-id") String workerId, CodeVersion codeVersion) {
        this.audit = audit;
        this.workerId = workerId;
        this.codeVersion = codeVersion;
    }

    /** A worker whose guard is tripped, as it last recorded: since when, and why. */
    public record Tripped(String worker, Instant since, String cause) {
    }

    void tripped(SystemicWatch.Trip trip) {
        record(AuditAction.SYSTEMIC_TRIP, "TRIPPED", trip.at(), trip.signature() == null ? trip.cause()
                : trip.cause() + " (" + trip.signature().describe() + ")");
    }

    void cleared(String why, Instant at) {
        record(AuditAction.SYSTEMIC_CLEAR, "CLEARED", at, why);
    }

    private void record(AuditAction action, String outcome, Instant at, String detail) {
        AuditEntry entry = new AuditEntry(AuditLog.GUARD, null, at.truncatedTo(ChronoUnit.MILLIS), workerId, action, null,
                codeVersion.value(), null, null, outcome, detail);
        try {
            Thread.ofVirtual().name("guard-record").start(() -> {
                try {
                    audit.append(entry);
                } catch (RuntimeException e) {
                    LOG.warnf("This worker's guard %s was not recorded for the fleet view (%s)", outcome, e.getClass().getSimpleName());
                }
            });
        } catch (Throwable e) {
            LOG.warnf("This worker's guard %s was not recorded for the fleet view (%s)", outcome, e.getClass().getSimpleName());
        }
    }

    /**
     * The workers whose guard is tripped: those whose newest entry says TRIPPED, written after the newest resume. A worker that
     * stopped while tripped stays listed until a resume; its {@code since} tells.
     *
     * @throws io.poisonguard.ledger.StoreUnavailable when the audit trail does not answer
     */
    public List<Tripped> tripped() {
        Optional<Instant> resumed = audit.forTenantsJob(Collections.singleton(null), AuditLog.CONSUMPTION, READ).stream()
                .filter(e -> e.tenant() == null && e.action() == AuditAction.RESUME_CONSUMPTION).map(AuditEntry::at)
                .max(Comparator.naturalOrder());
        Map<String, AuditEntry> newest = new HashMap<>();
        for (AuditEntry e : audit.forTenantsJob(Collections.singleton(null), AuditLog.GUARD, READ)) {
            if (e.tenant() == null && (e.action() == AuditAction.SYSTEMIC_TRIP || e.action() == AuditAction.SYSTEMIC_CLEAR)) {
                newest.merge(e.actor(), e, (a, b) -> b.at().isAfter(a.at()) ? b : a);
            }
        }
        return newest.values().stream()
                .filter(e -> e.action() == AuditAction.SYSTEMIC_TRIP && resumed.map(r -> e.at().isAfter(r)).orElse(true))
                .sorted(Comparator.comparing(AuditEntry::at))
                .map(e -> new Tripped(e.actor(), e.at(), e.detail())).toList();
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.quarkus.scheduler.Scheduled;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import io.poisonguard.systemic.SystemicWatch;

import java.util.Collections;
import java.util.Comparator;
import java.util.Optional;

/**
 * Carries an operator's resume to every worker. Workers sit behind one address, so a resume reaches one of them, which
 * clears its own guard and writes the audit entry. While this worker's guard is tripped it reads the newest such entry
 * every {@code systemic.fleet-check-interval}, and one written after its trip clears its guard too. Nothing is read
 * while the guard is clear, so a healthy fleet pays nothing for it.
 */
@Singleton
public class FleetResume {
    private static final Logger LOG = Logger.getLogger(FleetResume.class);
    /** The newest few entries of system:consumption: every one is a resume, and the newest is the one that counts. */
    private static final int READ = 5;

    private final SystemicGuard guard;
    private final AuditLog audit;
    private final FleetGuards fleet;
    /** The trip whose failed read was already logged at WARN: one warning a trip, not one every check. */
    private volatile SystemicWatch.Trip warnedFor;
    private volatile boolean started;

    public FleetResume(SystemicGuard guard, AuditLog audit, FleetGuards fleet) {
        this.fleet = fleet;
        this.guard = guard;
        this.audit = audit;
    }

    /** Called once the tables exist; until then, and after {@link #stop}, nothing is read. */
    public void start() {
        started = true;
    }

    /** Called at shutdown: a worker that stops consuming resumes nothing and sends no alert. */
    public void stop() {
        started = false;
        fleet.stopping();
    }

    @Scheduled(every = "${poison-guard.systemic.fleet-check-interval:5s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        if (started) {
            check();
        }
    }

    /** Reads the newest resume and applies it if this worker's guard is tripped; returns whether it resumed. */
    public boolean check() {
        Optional<SystemicWatch.Trip> trip = guard.trip();
        if (trip.isEmpty()) {
            return false;
        }
        fleet.stillTripped(trip.get());
        Optional<AuditEntry> newest;
        try {
            // Only the entries of no tenant: a tenant's job may be named system:consumption too, and its entries are not read.
            newest = audit.forTenantsJob(Collections.singleton(null), AuditLog.CONSUMPTION, READ).stream()
                    .filter(e -> e.tenant() == null && e.action() == AuditAction.RESUME_CONSUMPTION)
                    .max(Comparator.comparing(AuditEntry::at));
        } catch (RuntimeException e) {
            // The guard's own probes go on meanwhile; the next check reads again. Said once a trip: a worker that cannot read
            // the audit trail (a missing permission, a table that keeps throttling) never hears of an operator's resume.
            if (warnedFor != trip.get()) {
                warnedFor = trip.get();
                LOG.warnf("Reading the audit trail for an operator's resume failed (%s); this worker resumes on a successful probe,"
                        + " or a resume it answers itself", e.getClass().getSimpleName());
            }
            return false;
        }
        return newest.isPresent() && guard.resumedElsewhere(newest.get().at(), newest.get().actor());
    }
}

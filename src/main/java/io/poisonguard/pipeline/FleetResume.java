package io.poisonguard.pipeline;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.quarkus.scheduler.Scheduled;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.List;

/**
 * Carries an operator's resume to every worker. Workers sit behind one address, so a resume reaches one of them, which
 * clears its own guard and writes the audit entry. While this worker's guard is tripped it reads the newest such entry
 * every {@code systemic.fleet-check-interval}, and one written after its trip clears its guard too. Nothing is read
 * while the guard is clear, so a healthy fleet pays nothing for it.
 */
@Singleton
public class FleetResume {
    private static final Logger LOG = Logger.getLogger(FleetResume.class);

    private final SystemicGuard guard;
    private final AuditLog audit;

    public FleetResume(SystemicGuard guard, AuditLog audit) {
        this.guard = guard;
        this.audit = audit;
    }

    @Scheduled(every = "${poison-guard.systemic.fleet-check-interval:5s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        check();
    }

    /** Reads the newest resume and applies it if this worker's guard is tripped; returns whether it resumed. */
    public boolean check() {
        if (guard.trip().isEmpty()) {
            return false;
        }
        List<AuditEntry> newest;
        try {
            newest = audit.forJob(AuditLog.CONSUMPTION, e -> e.action() == AuditAction.RESUME_CONSUMPTION, 1);
        } catch (RuntimeException e) {
            // The guard's own probes go on meanwhile; the next check reads again.
            LOG.debugf("Reading the audit trail for a resume failed (%s)", e.getClass().getSimpleName());
            return false;
        }
        return !newest.isEmpty() && guard.resumedElsewhere(newest.get(0).at(), newest.get(0).actor());
    }
}

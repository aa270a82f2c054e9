package io.poisonguard.replay;

import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineRecord;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The one place that decides whether a job may be replayed now: it must exist, be QUARANTINED (or
 * stuck in REPLAYING for longer than the settle time: a replay interrupted before its copy reached a
 * worker may be re-issued), still be within its retention, and its tenant must be authorized for its
 * job type today.
 */
public final class ReplayGuard {
    private ReplayGuard() {
    }

    /** Empty when the replay may go ahead; otherwise the refusal or the honest unrecoverable answer. */
    public static Optional<ActionOutcome> check(String jobId, Optional<LedgerRecord> ledger, Optional<QuarantineRecord> record,
                                                Optional<String> tenantRefusal, Instant now, Duration settleTime,
                                                Duration quarantineRetention, Duration queueRetention) {
        if (ledger.isEmpty()) {
            return Optional.of(new ActionOutcome.Refused(jobId, Refusal.NOT_FOUND, "no ledger record for job " + jobId));
        }
        JobState state = ledger.get().state();
        if (state == JobState.REPLAYING && !staleReplay(ledger.get(), now, settleTime)) {
            return Optional.of(new ActionOutcome.Refused(jobId, Refusal.NOT_QUARANTINED, "job " + jobId + " is REPLAYING since "
                    + ledger.get().updatedAt() + "; a replay that never reaches a worker can be re-issued after the settle time ("
                    + settleTime.toSeconds() + "s)"));
        }
        if (state != JobState.QUARANTINED && state != JobState.REPLAYING) {
            return Optional.of(new ActionOutcome.Refused(jobId, Refusal.NOT_QUARANTINED, "job " + jobId + " is " + state
                    + "; only QUARANTINED jobs replay"));
        }
        if (record.isEmpty() && ledger.get().updatedAt().plus(quarantineRetention).isAfter(now)) {
            // Quarantined within the retention but no record yet: the quarantine is still being completed.
            return Optional.of(new ActionOutcome.Refused(jobId, Refusal.CONFLICT, "the quarantine of job " + jobId
                    + " is still completing; try again in a minute"));
        }
        if (record.isEmpty()) {
            return Optional.of(new ActionOutcome.Unrecoverable(jobId, "the quarantine record passed its retention; the payload is gone"));
        }
        if (state == JobState.QUARANTINED && record.get().generation() < ledger.get().generation()
                && ledger.get().updatedAt().plus(queueRetention).isAfter(now)) {
            // A replayed generation failed again and its quarantine has not written its record yet: until it has kept the
            // payload and sent the dead-letter copy, the job's only copy is on the main queue. The old record's age says
            // nothing about that, so a replay now would find nothing and call the job unrecoverable. Not past the main
            // queue's retention: no copy is on it longer, and a replay then looks in the vault and the DLQ as usual.
            return Optional.of(new ActionOutcome.Refused(jobId, Refusal.CONFLICT, "the quarantine of job " + jobId + " at generation "
                    + ledger.get().generation() + " is still completing (its record is of generation " + record.get().generation()
                    + "); its copy is still on the main queue, try again in a minute"));
        }
        if (tenantRefusal.isPresent()) {
            return Optional.of(new ActionOutcome.Refused(jobId, Refusal.TENANT_NOT_AUTHORIZED, tenantRefusal.get()));
        }
        return Optional.empty();
    }

    /** A replay that has not reached a worker (the job would be ACTIVE) within the settle time. */
    public static boolean staleReplay(LedgerRecord r, Instant now, Duration settleTime) {
        return r.state() == JobState.REPLAYING && r.updatedAt().plus(settleTime).isBefore(now);
    }
}

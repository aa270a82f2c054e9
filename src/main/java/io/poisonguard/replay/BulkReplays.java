package io.poisonguard.replay;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Bulk replay, canary first: one job is replayed and its outcome awaited; only if it succeeded are
 * the others replayed, paced by the replay rate. A failed canary stops the batch and says why.
 * Batches run in the background; their state is kept in memory and every step is audited.
 */
@ApplicationScoped
public class BulkReplays {
    private static final Logger LOG = Logger.getLogger(BulkReplays.class);
    private static final Duration POLL = Duration.ofMillis(250);

    private final OperatorActions actions;
    private final QuarantineStore quarantine;
    private final LedgerStore ledger;
    private final AuditLog audit;
    private final Clock clock;
    private final CodeVersion codeVersion;
    private final PoisonGuardConfig.Replay settings;
    private final Map<String, BulkReplay> batches = new ConcurrentHashMap<>();

    public BulkReplays(OperatorActions actions, QuarantineStore quarantine, LedgerStore ledger, AuditLog audit, Clock clock,
                       CodeVersion codeVersion, PoisonGuardConfig config) {
        this.actions = actions;
        this.quarantine = quarantine;
        this.ledger = ledger;
        this.audit = audit;
        this.clock = clock;
        this.codeVersion = codeVersion;
        this.settings = config.replay();
    }

    /** The dry run: each selected job with what a replay would do to it now. */
    public List<ActionOutcome> plan(BulkRequest request) {
        return select(request).stream().map(r -> actions.dryRun(JobKey.of(r.tenant(), r.jobId()))).toList();
    }

    public Optional<BulkReplay> find(String id) {
        return Optional.ofNullable(batches.get(id));
    }

    public BulkReplay start(BulkRequest request, String actor) {
        List<JobKey> jobIds = select(request).stream().map(r -> JobKey.of(r.tenant(), r.jobId()))
                .filter(k -> actions.dryRun(k) instanceof ActionOutcome.WouldReplay).toList();
        String id = UUID.randomUUID().toString();
        Instant now = clock.instant();
        if (jobIds.isEmpty()) {
            BulkReplay none = new BulkReplay(id, actor, request.reason(), BulkReplay.Status.NOTHING_TO_REPLAY, null, null, List.of(), now, now,
                    "no job in the selection can be replayed now (see the dry run)");
            batches.put(id, none);
            return none;
        }
        BulkReplay started = new BulkReplay(id, actor, request.reason(), BulkReplay.Status.CANARY_RUNNING, jobIds.get(0).jobId(), null, List.of(),
                now, null, jobIds.size() + " jobs selected");
        batches.put(id, started);
        Thread.ofVirtual().name("bulk-replay-" + id).start(() -> run(started, jobIds));
        return started;
    }

    private void run(BulkReplay batch, List<JobKey> jobIds) {
        List<ActionOutcome> outcomes = new ArrayList<>();
        JobKey canary = jobIds.get(0);
        ActionOutcome first = actions.replay(canary, batch.actor(), batch.reason() + " [bulk " + batch.id() + ", canary]");
        outcomes.add(first);
        String canaryOutcome = first instanceof ActionOutcome.Replayed r ? awaitOutcome(canary, r.generation()) : "NOT_REPLAYED: " + first;
        if (!canaryOutcome.equals("SUCCEEDED")) {
            finish(batch, BulkReplay.Status.CANARY_FAILED, canaryOutcome, outcomes,
                    "the canary " + canary.jobId() + " did not succeed (" + canaryOutcome + "); the other " + (jobIds.size() - 1) + " jobs stay quarantined");
            return;
        }
        batches.put(batch.id(), copy(batch, BulkReplay.Status.WIDENING, canaryOutcome, outcomes, null, batch.detail()));
        for (JobKey jobId : jobIds.subList(1, jobIds.size())) {
            outcomes.add(actions.replay(jobId, batch.actor(), batch.reason() + " [bulk " + batch.id() + "]"));
            batches.put(batch.id(), copy(batch, BulkReplay.Status.WIDENING, canaryOutcome, List.copyOf(outcomes), null, batch.detail()));
        }
        long replayed = outcomes.stream().filter(o -> o instanceof ActionOutcome.Replayed).count();
        finish(batch, BulkReplay.Status.COMPLETED, canaryOutcome, outcomes, replayed + " of " + jobIds.size() + " jobs replayed");
    }

    /** Waits for the canary's new generation to end: SUCCEEDED, or anything that is not a success. */
    private String awaitOutcome(JobKey jobId, int generation) {
        Instant deadline = clock.instant().plus(settings.canaryTimeout());
        while (clock.instant().isBefore(deadline)) {
            Optional<LedgerRecord> r = ledger.findOwn(jobId);
            if (r.isPresent() && r.get().generation() == generation) {
                JobState s = r.get().state();
                if (s == JobState.SUCCEEDED) {
                    return "SUCCEEDED";
                }
                if (s.parked()) {
                    return s + ": " + r.get().quarantineReason();
                }
            }
            LockSupport.parkNanos(POLL.toNanos());
        }
        return "TIMED_OUT after " + settings.canaryTimeout().toSeconds() + "s";
    }

    private void finish(BulkReplay batch, BulkReplay.Status status, String canaryOutcome, List<ActionOutcome> outcomes, String detail) {
        BulkReplay done = copy(batch, status, canaryOutcome, outcomes, clock.instant(), detail);
        batches.put(batch.id(), done);
        audit.append(new AuditEntry("bulk:" + batch.id(), clock.instant(), batch.actor(), AuditAction.BULK_REPLAY, batch.reason(),
                codeVersion.value(), null, null, status.name(), "canary " + batch.canaryJobId() + ": " + canaryOutcome + "; " + detail));
        LOG.infof("Bulk replay %s by %s: %s (%s)", batch.id(), batch.actor(), status, detail);
    }

    private static BulkReplay copy(BulkReplay b, BulkReplay.Status status, String canaryOutcome, List<ActionOutcome> outcomes, Instant finished,
                                   String detail) {
        return new BulkReplay(b.id(), b.actor(), b.reason(), status, b.canaryJobId(), canaryOutcome, List.copyOf(outcomes), b.startedAt(),
                finished, detail);
    }

    private List<QuarantineRecord> select(BulkRequest request) {
        int limit = Math.min(request.limit(), settings.maxBatch());
        return quarantine.list(new QuarantineQuery(request.failureClass(), request.tenant(), request.jobType(),
                Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), limit, Optional.empty()), clock.instant()).items();
    }
}

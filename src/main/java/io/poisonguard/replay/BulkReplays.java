package io.poisonguard.replay;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantinePage;
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
import java.util.Optional;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Bulk replay, canary first: one job is replayed and its outcome awaited; only if it succeeded do the others follow, in
 * waves whose outcomes are read before the next goes ({@link BatchRun}), paced by the replay rate. A batch covers one
 * tenant, one failure class and one job type, so its canary speaks for jobs that failed alike.
 *
 * <p>Batches run in the background. Every step's state is written to the {@link BulkReplayStore}, so any
 * instance answers for any batch; this instance holds only the batches it is running, and forgets each when
 * it ends. A batch is audited when it starts and when it ends; one that found nothing to replay, once.
 */
@ApplicationScoped
public class BulkReplays {
    private static final Logger LOG = Logger.getLogger(BulkReplays.class);
    /** A step's detail is cut to this in the kept state (the audit entry of the job has it whole). */
    private static final int DETAIL_CHARS = 200;

    /** What the final detail of a running batch whose selection did not reach the listing's end says of it, by batch id. */
    private final java.util.Map<String, String> partlyOf = new java.util.concurrent.ConcurrentHashMap<>();
    private final OperatorActions actions;
    private final QuarantineStore quarantine;
    private final LedgerStore ledger;
    private final AuditLog audit;
    private final BulkReplayStore store;
    private final Clock clock;
    private final CodeVersion codeVersion;
    private final PoisonGuardConfig.Replay settings;
    private final ConsumptionState consumption;
    private final int maxWave;
    /**
     * Orders the writes of a batch's state (its steps, the touch, its end). A lock rather than a monitor: the writes are
     * DynamoDB calls on virtual threads, which a monitor would pin to their carriers for as long as the call takes.
     */
    private final java.util.concurrent.locks.ReentrantLock writes = new java.util.concurrent.locks.ReentrantLock();
    private final Map<String, BulkReplay> running = new ConcurrentHashMap<>();
    /** Batches that ended here whose final state the store did not take: this instance answers for them. */
    private final Map<String, BulkReplay> unkept = new ConcurrentHashMap<>();
    private static final int FINAL_WRITES = 3;
    /**
     * How often a running batch's state is written again when no step has written it (a canary or a wave watched, a slow
     * replay), so its readers see it move; scripts/replay.mjs gives up after 5 minutes unmoved.
     */
    static final Duration TOUCH = Duration.ofSeconds(30);
    private final Duration touch;
    /** A batch kept as running but not written for this long (four touches) has lost its instance, or it cannot write the table. */
    private final Duration abandonedAfter;
    /** How a canary that never reached a worker within the timeout is reported. */
    static final String NOT_STARTED = "NOT_STARTED";
    private static final java.time.Duration FINAL_WRITE_PAUSE = java.time.Duration.ofSeconds(1);

    @jakarta.inject.Inject
    public BulkReplays(OperatorActions actions, QuarantineStore quarantine, LedgerStore ledger, AuditLog audit, BulkReplayStore store,
                       Clock clock, CodeVersion codeVersion, PoisonGuardConfig config, ConsumptionState consumption) {
        this(actions, quarantine, ledger, audit, store, clock, codeVersion, config, consumption, TOUCH);
    }

    /** With {@code touch} for {@link #TOUCH} (tests, which cannot wait minutes); a batch then reads abandoned after four. */
    BulkReplays(OperatorActions actions, QuarantineStore quarantine, LedgerStore ledger, AuditLog audit, BulkReplayStore store,
                Clock clock, CodeVersion codeVersion, PoisonGuardConfig config, ConsumptionState consumption, Duration touch) {
        this.touch = touch;
        this.abandonedAfter = touch.multipliedBy(4);
        this.actions = actions;
        this.quarantine = quarantine;
        this.ledger = ledger;
        this.audit = audit;
        this.store = store;
        this.clock = clock;
        this.codeVersion = codeVersion;
        this.settings = config.replay();
        this.consumption = consumption;
        this.maxWave = maxWave(config.systemic());
    }

    /**
     * The largest wave of a batch: below the systemic guard's thresholds (same-signature failures, quarantines per window), so a
     * wave whose jobs all fail again halts the batch before the guard stops consumption for every tenant on its account.
     */
    static int maxWave(PoisonGuardConfig.Systemic guard) {
        if (!guard.enabled()) {
            return BatchRun.MAX_WAVE;
        }
        return Math.max(1, Math.min(BatchRun.MAX_WAVE, Math.min(guard.sameSignature() - 1, guard.maxQuarantines() / 2)));
    }

    /**
     * The most pages of the quarantine listing one selection reads, each bounded by {@code ops-api.listing-read-budget}: a
     * selection that few records match (a job type none has) would otherwise read the class's whole index, every
     * tenant's records of it, for one request, and the dry run is open to any viewer.
     */
    static final int SELECT_PAGES = 10;

    /**
     * A dry run's answer: each selected job with what a replay would do to it now, and where the listing goes on ({@code next},
     * null once it was read to its end): a later batch given it as {@code after} takes the jobs past this one's.
     */
    public record Plan(List<ActionOutcome> jobs, String next, List<String> jobTypes) {
        public boolean complete() {
            return next == null;
        }
    }

    /** The jobs a batch selects, and the listing's cursor past them (null: read to its end). */
    private record Selection(List<QuarantineRecord> records, String next) {
    }

    /** The dry run: each selected job with what a replay would do to it now. */
    public Plan plan(BulkRequest request) {
        Selection selection = select(request);
        return new Plan(selection.records().stream().map(r -> actions.dryRun(JobKey.of(r.tenant(), r.jobId()))).toList(),
                selection.next(), jobTypes(selection));
    }

    /** What a batch's detail says of a selection that did not reach the listing's end: where the next batch goes on. */
    private static String partly(Selection selection) {
        return selection.next() == null ? "" : "; the listing goes on past this selection: a batch given \"after\": \""
                + selection.next() + "\" takes the jobs after these";
    }

    /** The batch as this instance runs it, else as it was last kept by whichever instance ran it. */
    public Optional<BulkReplay> find(String id) {
        BulkReplay local = running.get(id);
        if (local == null) {
            local = unkept.get(id);
        }
        return local != null ? Optional.of(local) : store.find(id).map(this::orAbandoned);
    }

    /** A batch kept as running, but not written for four touches, reads as abandoned, saying what that leaves. */
    private BulkReplay orAbandoned(BulkReplay kept) {
        if (!kept.status().running() || kept.updatedAt().plus(abandonedAfter).isAfter(clock.instant())) {
            return kept;
        }
        String sending = kept.outcomes().stream().filter(s -> s.outcome().equals(BatchRun.SENDING)).map(BulkReplay.Step::jobId)
                .findFirst().map(j -> " Job " + j + " was being replayed then: it may be REPLAYING, and a replay of it re-issues it"
                        + " once replay.settle-time has passed.").orElse("");
        return kept.abandoned("nothing has been kept of this batch since " + kept.updatedAt() + " (it was " + kept.status()
                + "): the instance running it stopped, or cannot write the bulk replay table. The jobs after its last step stay"
                + " quarantined; a new batch selects them." + sending);
    }

    /** How many batches this instance is running now. */
    public int runningHere() {
        return running.size();
    }

    /**
     * A selection of several job types with none named: one canary answers for one job type (its handler, its fix), so a
     * batch takes one. Refused before anything is replayed; the dry run names the types.
     */
    public static final class MixedJobTypes extends RuntimeException {
        private final List<String> jobTypes;

        public MixedJobTypes(List<String> jobTypes) {
            super("the selection holds jobs of " + jobTypes.size() + " types (" + String.join(", ", jobTypes) + ") and its canary"
                    + " answers for one: name one jobType");
            this.jobTypes = jobTypes;
        }

        public List<String> jobTypes() {
            return jobTypes;
        }
    }

    /** The job types of a selection, sorted. */
    private static List<String> jobTypes(Selection selection) {
        return selection.records().stream().map(QuarantineRecord::jobType).filter(java.util.Objects::nonNull).distinct().sorted().toList();
    }

    public BulkReplay start(BulkRequest request, String actor) {
        Selection selection = select(request);
        List<String> types = jobTypes(selection);
        if (request.jobType().isEmpty() && types.size() > 1) {
            throw new MixedJobTypes(types);
        }
        List<JobKey> jobIds = new java.util.ArrayList<>();
        // Selected jobs the dry run refuses now (a replay under way, a quarantine still completing): not tried, but counted in
        // the selection and listed first among the steps, with why.
        List<BulkReplay.Step> notNow = new java.util.ArrayList<>();
        for (QuarantineRecord r : selection.records()) {
            JobKey k = JobKey.of(r.tenant(), r.jobId());
            ActionOutcome dry = actions.dryRun(k);
            if (dry instanceof ActionOutcome.WouldReplay) {
                jobIds.add(k);
            } else {
                notNow.add(step(dry));
            }
        }
        String partly = (notNow.isEmpty() ? "" : "; " + notNow.size() + " selected job(s) could not be replayed now (their steps say why)")
                + partly(selection);
        String id = UUID.randomUUID().toString();
        Instant now = clock.instant();
        if (jobIds.isEmpty()) {
            BulkReplay none = new BulkReplay(id, actor, request.reason(), request.tenant(), request.failureClass(), notNow.size(),
                    BulkReplay.Status.NOTHING_TO_REPLAY, null, null, notNow, now, now, now,
                    "no job in the selection can be replayed now (see the dry run)" + partly, 0, 0);
            store.put(none);
            audited(none);
            return none;
        }
        BulkReplay started = new BulkReplay(id, actor, request.reason(), request.tenant(), request.failureClass(),
                jobIds.size() + notNow.size(), BulkReplay.Status.CANARY_RUNNING, jobIds.get(0).jobId(), null, notNow, now, now, null,
                (jobIds.size() + notNow.size()) + " jobs selected" + partly, 0, 0);
        store.put(started);
        // Audited before anything is replayed (a trail that does not answer refuses the batch, 503): a batch whose instance dies
        // midway still has its start in the trail, with the jobs it took.
        try {
            audit.append(new AuditEntry("bulk:" + id, request.tenant(), now, actor, AuditAction.BULK_REPLAY, request.reason(),
                    codeVersion.value(), null, null, "STARTED", request.failureClass() + ", " + started.selected() + " selected: " + named(jobIds)
                    + partly));
        } catch (RuntimeException e) {
            try {
                store.put(started.next(BulkReplay.Status.STOPPED, null, List.of(), clock.instant(), true,
                        "not started: the audit trail did not answer, and nothing is replayed unaudited"));
            } catch (RuntimeException alsoDown) {
                LOG.warnf("Bulk replay %s was refused (the audit trail did not answer), and keeping that failed too (%s)", id,
                        alsoDown.getClass().getSimpleName());
            }
            throw e;
        }
        if (!partly.isEmpty()) {
            // Said again when the batch ends, in its final detail and its audit entry, which replace the starting detail.
            partlyOf.put(id, partly);
        }
        running.put(id, started);
        BatchRun batch = new BatchRun(started, actions, new WaveWatch(ledger, clock), consumption, settings.canaryTimeout(), maxWave, clock,
                new BatchRun.Keeper() {
                    @Override
                    public void progress(BulkReplay state) {
                        BulkReplays.this.progress(state);
                    }

                    @Override
                    public void finish(BulkReplay state, BulkReplay.Status status, String canaryOutcome, List<BulkReplay.Step> steps,
                                       String detail) {
                        BulkReplays.this.finish(state, status, canaryOutcome, steps, detail);
                    }
                });
        Thread ticker = Thread.ofVirtual().name("bulk-replay-touch-" + id).start(() -> touchWhileRunning(id));
        Thread.ofVirtual().name("bulk-replay-" + id).start(() -> {
            try {
                batch.run(jobIds);
            } catch (Throwable e) {
                // An Error too (out of memory): the batch must not read as running for ever on this instance.
                LOG.errorf("Bulk replay %s stopped by %s", id, e.getClass().getName());
                BulkReplay last = batch.state();
                List<BulkReplay.Step> steps = batch.steps();
                long done = steps.stream().filter(st -> !st.outcome().equals(BatchRun.SENDING)).count();
                finish(last, BulkReplay.Status.STOPPED, last.canaryOutcome(), steps, "stopped by an error (" + e.getClass().getSimpleName()
                        + ") after " + done + " of " + started.selected() + " jobs" + (done < steps.size() ? " (the one whose step says SENDING"
                        + " was under way: it may be REPLAYING, and a replay of it re-issues it once replay.settle-time has passed)" : ""));
            } finally {
                ticker.interrupt();
            }
        });
        return started;
    }

    /** The first jobs of a batch, by id, for its starting audit entry (the whole list would not fit one entry). */
    private static String named(List<JobKey> jobIds) {
        int shown = Math.min(20, jobIds.size());
        return String.join(", ", jobIds.subList(0, shown).stream().map(JobKey::jobId).toList())
                + (jobIds.size() > shown ? " and " + (jobIds.size() - shown) + " more" : "");
    }

    /** Writes a running batch's state again whenever no step has for two thirds of a touch, until it ends. */
    private void touchWhileRunning(String id) {
        while (!Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(touch.toNanos() / 3);
            writes.lock();
            try {
                BulkReplay state = running.get(id);
                if (state == null || state.finishedAt() != null) {
                    return;
                }
                if (!state.updatedAt().plus(touch.multipliedBy(2).dividedBy(3)).isAfter(clock.instant())) {
                    progress(state.touched(clock.instant()));
                }
            } finally {
                writes.unlock();
            }
        }
    }

    /**
     * Keeps the batch's state after a step. A write the store refuses does not stop the batch (its jobs are replayed and
     * audited one by one all the same): this instance answers for it meanwhile, and the next step's write keeps it.
     */
    private void progress(BulkReplay state) {
        writes.lock();
        try {
            BulkReplay now = running.get(state.id());
            if (now == null || now.finishedAt() != null) {
                return;
            }
            running.put(state.id(), state);
            try {
                store.put(state);
            } catch (RuntimeException e) {
                LOG.warnf("Bulk replay %s: keeping its progress failed (%s); the next step keeps it", state.id(), e.getClass().getSimpleName());
            }
        } finally {
            writes.unlock();
        }
    }

    static BulkReplay.Step step(ActionOutcome o) {
        return switch (o) {
            case ActionOutcome.Replayed r -> new BulkReplay.Step(r.jobId(), "REPLAYED", "generation " + r.generation());
            case ActionOutcome.Refused r -> new BulkReplay.Step(r.jobId(), "REFUSED_" + r.refusal(), cut(r.detail()));
            case ActionOutcome.Unrecoverable u -> new BulkReplay.Step(u.jobId(), "UNRECOVERABLE", cut(u.detail()));
            default -> new BulkReplay.Step(o.jobId(), o.getClass().getSimpleName().toUpperCase(java.util.Locale.ROOT), null);
        };
    }

    static String cut(String s) {
        return s == null || s.length() <= DETAIL_CHARS ? s : s.substring(0, DETAIL_CHARS) + "…";
    }

    /**
     * Ends the batch: its final state is written (tried {@value #FINAL_WRITES} times; if the store never takes it, this
     * instance goes on answering with it) and audited, whatever the store did.
     */
    private void finish(BulkReplay batch, BulkReplay.Status status, String canaryOutcome, List<BulkReplay.Step> outcomes, String detail) {
        String partly = partlyOf.remove(batch.id());
        BulkReplay done = batch.next(status, canaryOutcome, outcomes, clock.instant(), true, partly == null ? detail : detail + partly);
        writes.lock();
        try {
            // Under the lock the touch takes: once the end is here, nothing writes a running state over it, and this instance
            // answers with the end while it is being kept.
            running.put(done.id(), done);
        } finally {
            writes.unlock();
        }
        try {
            audited(done);
        } catch (RuntimeException e) {
            LOG.errorf("Bulk replay %s ended %s but its audit entry was not written (%s): %s", done.id(), done.status(),
                    e.getClass().getSimpleName(), done.detail());
        }
        if (!keep(done)) {
            unkept.put(done.id(), done);
        }
        running.remove(done.id());
    }

    private boolean keep(BulkReplay done) {
        for (int i = 1; i <= FINAL_WRITES; i++) {
            try {
                store.put(done);
                return true;
            } catch (RuntimeException e) {
                LOG.warnf("Bulk replay %s: keeping its final state failed (%s), try %d of %d", done.id(), e.getClass().getSimpleName(),
                        i, FINAL_WRITES);
                if (i < FINAL_WRITES) {
                    LockSupport.parkNanos(FINAL_WRITE_PAUSE.toNanos());
                }
            }
        }
        return false;
    }

    private void audited(BulkReplay done) {
        audit.append(new AuditEntry("bulk:" + done.id(), done.tenant(), clock.instant(), done.actor(), AuditAction.BULK_REPLAY, done.reason(),
                codeVersion.value(), null, null, done.status().name(), done.failureClass() + ", " + done.selected() + " selected; "
                + (done.canaryJobId() == null ? "" : "canary " + done.canaryJobId() + ": " + done.canaryOutcome() + "; ") + done.detail()));
        LOG.infof("Bulk replay %s by %s: %s (%s)", done.id(), done.actor(), done.status(), done.detail());
    }

    /**
     * The batch's jobs: pages of the listing, followed until the cap, the end, or {@link #SELECT_PAGES} pages (each page
     * reads a bounded number of records).
     */
    private Selection select(BulkRequest request) {
        int limit = Math.min(request.limit(), settings.maxBatch());
        List<QuarantineRecord> out = new ArrayList<>();
        Optional<String> cursor = request.after();
        int pages = 0;
        do {
            QuarantinePage page = quarantine.list(new QuarantineQuery(Optional.of(request.failureClass()), Optional.of(request.tenant()),
                    request.jobType(), Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), limit - out.size(), cursor), clock.instant());
            out.addAll(page.items());
            cursor = Optional.ofNullable(page.nextCursor());
            pages++;
        } while (cursor.isPresent() && out.size() < limit && pages < SELECT_PAGES);
        return new Selection(out, cursor.orElse(null));
    }
}

package io.poisonguard.replay;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
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
 * Bulk replay, canary first: one job is replayed and its outcome awaited; only if it succeeded are
 * the others replayed, paced by the replay rate. A failed canary stops the batch and says why. A batch
 * covers one tenant and one failure class, so its canary speaks for jobs that failed alike.
 *
 * <p>Batches run in the background. Every step's state is written to the {@link BulkReplayStore}, so any
 * instance answers for any batch; this instance holds only the batches it is running, and forgets each when
 * it ends. Every batch, including one that found nothing to replay, leaves an audit entry.
 */
@ApplicationScoped
public class BulkReplays {
    private static final Logger LOG = Logger.getLogger(BulkReplays.class);
    private static final Duration POLL = Duration.ofMillis(250);
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
    private final Map<String, BulkReplay> running = new ConcurrentHashMap<>();
    /** Batches that ended here whose final state the store did not take: this instance answers for them. */
    private final Map<String, BulkReplay> unkept = new ConcurrentHashMap<>();
    private static final int FINAL_WRITES = 3;
    /** How often a batch waiting on its canary writes its state again (scripts/replay.mjs gives up after 5 minutes unmoved). */
    private static final java.time.Duration CANARY_TOUCH = java.time.Duration.ofSeconds(30);
    /** How a canary that never reached a worker within the timeout is reported. */
    static final String NOT_STARTED = "NOT_STARTED";
    private static final java.time.Duration FINAL_WRITE_PAUSE = java.time.Duration.ofSeconds(1);

    public BulkReplays(OperatorActions actions, QuarantineStore quarantine, LedgerStore ledger, AuditLog audit, BulkReplayStore store,
                       Clock clock, CodeVersion codeVersion, PoisonGuardConfig config) {
        this.actions = actions;
        this.quarantine = quarantine;
        this.ledger = ledger;
        this.audit = audit;
        this.store = store;
        this.clock = clock;
        this.codeVersion = codeVersion;
        this.settings = config.replay();
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
        return local != null ? Optional.of(local) : store.find(id);
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
        List<JobKey> jobIds = selection.records().stream().map(r -> JobKey.of(r.tenant(), r.jobId()))
                .filter(k -> actions.dryRun(k) instanceof ActionOutcome.WouldReplay).toList();
        String partly = partly(selection);
        String id = UUID.randomUUID().toString();
        Instant now = clock.instant();
        if (jobIds.isEmpty()) {
            BulkReplay none = new BulkReplay(id, actor, request.reason(), request.tenant(), request.failureClass(), 0,
                    BulkReplay.Status.NOTHING_TO_REPLAY, null, null, List.of(), now, now, now,
                    "no job in the selection can be replayed now (see the dry run)" + partly, 0, 0);
            store.put(none);
            audited(none);
            return none;
        }
        BulkReplay started = new BulkReplay(id, actor, request.reason(), request.tenant(), request.failureClass(), jobIds.size(),
                BulkReplay.Status.CANARY_RUNNING, jobIds.get(0).jobId(), null, List.of(), now, now, null, jobIds.size() + " jobs selected" + partly,
                0, 0);
        store.put(started);
        if (!partly.isEmpty()) {
            // Said again when the batch ends, in its final detail and its audit entry, which replace the starting detail.
            partlyOf.put(id, partly);
        }
        running.put(id, started);
        Thread.ofVirtual().name("bulk-replay-" + id).start(() -> {
            try {
                run(started, jobIds);
            } catch (RuntimeException e) {
                LOG.errorf("Bulk replay %s stopped by %s", id, e.getClass().getName());
                BulkReplay last = running.getOrDefault(id, started);
                finish(last, BulkReplay.Status.STOPPED, last.canaryOutcome(), last.outcomes(), "stopped by an error ("
                        + e.getClass().getSimpleName() + ") after " + last.outcomes().size() + " of " + jobIds.size() + " jobs");
            }
        });
        return started;
    }

    private void run(BulkReplay batch, List<JobKey> jobIds) {
        List<BulkReplay.Step> outcomes = new ArrayList<>();
        JobKey canary = jobIds.get(0);
        ActionOutcome first = actions.replay(canary, batch.actor(), batch.reason() + " [bulk " + batch.id() + ", canary]");
        outcomes.add(step(first));
        // While the canary runs its state is written again now and then, so a reader can tell a batch waiting from one whose
        // instance died (updatedAt moves).
        BulkReplay waiting = batch.next(BulkReplay.Status.CANARY_RUNNING, null, outcomes, clock.instant(), false, batch.detail());
        // Kept at once: a batch stopped while the canary runs must still say the canary was sent.
        progress(waiting);
        String canaryOutcome = first instanceof ActionOutcome.Replayed r
                ? awaitOutcome(canary, r.generation(), () -> progress(waiting.next(BulkReplay.Status.CANARY_RUNNING, null, waiting.outcomes(),
                        clock.instant(), false, waiting.detail())))
                : "NOT_REPLAYED: " + first;
        if (!canaryOutcome.equals("SUCCEEDED")) {
            String why = canaryOutcome.startsWith(NOT_STARTED)
                    ? "the canary " + canary.jobId() + " did not reach a worker within replay.canary-timeout (" + canaryOutcome
                            + ": its copy waits behind the main queue's backlog, so the fix is untested); it runs when its turn comes,"
                            + " and the other " + (jobIds.size() - 1) + " jobs stay quarantined: replay them once it has succeeded"
                    : "the canary " + canary.jobId() + " did not succeed (" + canaryOutcome + "); the other " + (jobIds.size() - 1)
                            + " jobs stay quarantined";
            finish(batch, BulkReplay.Status.CANARY_FAILED, canaryOutcome, outcomes, why);
            return;
        }
        progress(batch.next(BulkReplay.Status.WIDENING, canaryOutcome, outcomes, clock.instant(), false, batch.detail()));
        for (JobKey jobId : jobIds.subList(1, jobIds.size())) {
            outcomes.add(step(actions.replay(jobId, batch.actor(), batch.reason() + " [bulk " + batch.id() + "]")));
            progress(batch.next(BulkReplay.Status.WIDENING, canaryOutcome, outcomes, clock.instant(), false, batch.detail()));
        }
        long replayed = outcomes.stream().filter(o -> o.outcome().equals("REPLAYED")).count();
        finish(batch, BulkReplay.Status.COMPLETED, canaryOutcome, outcomes, replayed + " of " + jobIds.size() + " jobs replayed");
    }

    /**
     * Keeps the batch's state after a step. A write the store refuses does not stop the batch (its jobs are replayed and
     * audited one by one all the same): this instance answers for it meanwhile, and the next step's write keeps it.
     */
    private void progress(BulkReplay state) {
        running.put(state.id(), state);
        try {
            store.put(state);
        } catch (RuntimeException e) {
            LOG.warnf("Bulk replay %s: keeping its progress failed (%s); the next step keeps it", state.id(), e.getClass().getSimpleName());
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

    private static String cut(String s) {
        return s == null || s.length() <= DETAIL_CHARS ? s : s.substring(0, DETAIL_CHARS) + "…";
    }

    /** Waits for the canary's new generation to end: SUCCEEDED, or anything that is not a success. */
    String awaitOutcome(JobKey jobId, int generation, Runnable stillWaiting) {
        Instant deadline = clock.instant().plus(settings.canaryTimeout());
        Instant touch = clock.instant().plus(CANARY_TOUCH);
        boolean started = false;
        while (clock.instant().isBefore(deadline)) {
            if (!clock.instant().isBefore(touch)) {
                stillWaiting.run();
                touch = clock.instant().plus(CANARY_TOUCH);
            }
            Optional<LedgerRecord> r;
            try {
                r = ledger.findOwn(jobId);
            } catch (io.poisonguard.ledger.StoreUnavailable down) {
                // One read the ledger did not answer says nothing about the canary: look again, within the same timeout.
                LOG.debugf("Bulk replay: reading canary %s's outcome failed (%s); looking again", jobId.jobId(), down.getMessage());
                r = Optional.empty();
            }
            if (r.isPresent() && r.get().generation() == generation) {
                JobState s = r.get().state();
                // REPLAYING: its copy has not reached a worker yet (it waits behind the main queue's backlog).
                started |= s != JobState.REPLAYING;
                if (s == JobState.SUCCEEDED) {
                    return "SUCCEEDED";
                }
                if (s.parked()) {
                    return s + ": " + r.get().quarantineReason();
                }
            }
            LockSupport.parkNanos(POLL.toNanos());
        }
        // A canary that never ran says nothing of the fix: told apart from one that ran and did not finish in time.
        return (started ? "TIMED_OUT after " : NOT_STARTED + " within ") + settings.canaryTimeout().toSeconds() + "s";
    }

    /**
     * Ends the batch: its final state is written (tried {@value #FINAL_WRITES} times; if the store never takes it, this
     * instance goes on answering with it) and audited, whatever the store did.
     */
    private void finish(BulkReplay batch, BulkReplay.Status status, String canaryOutcome, List<BulkReplay.Step> outcomes, String detail) {
        String partly = partlyOf.remove(batch.id());
        BulkReplay done = batch.next(status, canaryOutcome, outcomes, clock.instant(), true, partly == null ? detail : detail + partly);
        if (!keep(done)) {
            unkept.put(done.id(), done);
        }
        running.remove(batch.id());
        try {
            audited(done);
        } catch (RuntimeException e) {
            LOG.errorf("Bulk replay %s ended %s but its audit entry was not written (%s): %s", done.id(), done.status(),
                    e.getClass().getSimpleName(), done.detail());
        }
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

package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.quarantine.ReplayEntry;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import io.poisonguard.vault.VaultUnreadable;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Replay, resolve and payload view: the guarded operator actions. Every decision goes through
 * {@link ReplayGuard}; every action, refused or done, leaves an audit entry.
 *
 * <p>Replay order: the ledger moves QUARANTINED → REPLAYING with one conditional write (so of two
 * concurrent replays exactly one proceeds), then the payload is read from the vault (one keyed read) or,
 * for a job quarantined without it, taken from the dead-letter queue; the paced send puts it back on the
 * main queue with the next generation, and only then are the kept payload and the copies deleted.
 * {@code UNRECOVERABLE} is concluded only when the vault has no entry and a complete DLQ scan found none.
 */
@ApplicationScoped
public class OperatorActions {
    private static final Logger LOG = Logger.getLogger(OperatorActions.class);

    private final LedgerStore ledger;
    private final QuarantineStore quarantine;
    private final TenantDirectory tenants;
    private final PayloadArchive archive;
    private final CopySweeper sweeper;
    private final PayloadVault vault;
    private final ReplaySender sender;
    private final AuditLog audit;
    private final Clock clock;
    private final CodeVersion codeVersion;
    private final ReplayPacing pacer;
    private final java.time.Duration settleTime;
    private final java.time.Duration quarantineRetention;
    private final int redriveMaxReceiveCount;
    /** How long the main queue keeps a message: a source kept there is gone after it. */
    private final java.time.Duration queueRetention;

    public OperatorActions(LedgerStore ledger, QuarantineStore quarantine, TenantDirectory tenants, PayloadArchive archive,
                           PayloadVault vault, ReplaySender sender, AuditLog audit, Clock clock, CodeVersion codeVersion,
                           PoisonGuardConfig config, ReplayQuota quota) {
        this.vault = vault;
        this.ledger = ledger;
        this.quarantine = quarantine;
        this.tenants = tenants;
        this.archive = archive;
        this.sweeper = new CopySweeper(archive);
        this.sender = sender;
        this.audit = audit;
        this.clock = clock;
        this.codeVersion = codeVersion;
        this.pacer = new ReplayPacing(config.replay().rate(), quota, clock);
        this.settleTime = config.replay().settleTime();
        this.redriveMaxReceiveCount = config.resources().redriveMaxReceiveCount();
        this.queueRetention = config.resources().queueRetention();
        this.quarantineRetention = config.retention().quarantine();
    }

    /** What a replay of the job would do now, changing nothing. */
    public ActionOutcome dryRun(JobKey key) {
        String jobId = key.jobId();
        Optional<LedgerRecord> current = ledger.findOwn(key);
        return guard(key, current).orElseGet(() ->
                new ActionOutcome.WouldReplay(jobId, current.get().generation() + 1, current.get().attempt() + 1));
    }

    public ActionOutcome replay(JobKey key, String actor, String reason) {
        String jobId = key.jobId();
        Instant now = clock.instant();
        Optional<LedgerRecord> current = ledger.findOwn(key);
        Optional<ActionOutcome> refused = guard(key, current);
        if (refused.isPresent()) {
            if (refused.get() instanceof ActionOutcome.Unrecoverable u) {
                markUnrecoverable(current.get(), now);
            }
            record(key, AuditAction.REPLAY, refused.get(), actor, reason, current.map(LedgerRecord::generation).orElse(null),
                    current.map(LedgerRecord::attempt).orElse(null));
            return refused.get();
        }
        if (current.get().state() == JobState.REPLAYING) {
            return reissue(current.get(), actor, reason, now);
        }
        LedgerRecord quarantined = current.get();
        LedgerRecord replaying;
        try {
            replaying = ledger.write(quarantined.replayed(now));
        } catch (LedgerConflict lost) {
            return conflict(jobId, actor, reason, quarantined);
        } catch (StoreUnavailable down) {
            return unanswered(key, AuditAction.REPLAY, down, "the move to REPLAYING", "the job is then REPLAYING with nothing sent:"
                    + " a replay of it re-issues it once replay.settle-time has passed", actor, reason, quarantined);
        }
        Kept kept;
        List<ArchivedMessage> copies = List.of();
        try {
            kept = kept(key);
            if (kept.payload().isEmpty()) {
                ArchiveScan scan = archive.find(key);
                copies = scan.copies();
                if (copies.isEmpty()) {
                    return nothingToSend(key, quarantined, replaying, kept, scan, actor, reason, now);
                }
            }
        } catch (RuntimeException e) {
            return putBack(replaying, quarantined, Refusal.UNAVAILABLE, unavailable(key, e), actor, reason);
        }
        return kept.payload().isPresent()
                ? send(replaying, quarantined, kept.payload().get(), actor, reason, now)
                : send(replaying, quarantined, copies, actor, reason, now);
    }

    /**
     * The replay found no payload to send: the job goes back to QUARANTINED (the quarantine may still be completing, a
     * copy may be held or past the scan's bound, the vault's entry may not open here) or, only when nothing can hold the
     * payload any more, to UNRECOVERABLE. A failure here reaches the caller, which puts the job back.
     */
    private ActionOutcome nothingToSend(JobKey key, LedgerRecord quarantined, LedgerRecord replaying, Kept kept, ArchiveScan scan,
                                        String actor, String reason, Instant now) {
        String jobId = key.jobId();
        int attempt = replaying.attempt() + 1;
        Optional<QuarantineRecord> stored = quarantine.find(key);
        Optional<Instant> quarantinedAt = stored.map(QuarantineRecord::quarantinedAt);
        if (quarantinedAt.isPresent() && quarantinedAt.get().plus(settleTime).isAfter(now)) {
            // The quarantine may still be sending its dead-letter copy: not a loss, just early.
            ledger.write(quarantined.withVersion(replaying.version()));
            ActionOutcome early = new ActionOutcome.Refused(jobId, Refusal.CONFLICT,
                    "the quarantine of job " + jobId + " is still completing; try again in a minute");
            record(key, AuditAction.REPLAY, early, actor, reason, quarantined.generation(), quarantined.attempt());
            return early;
        }
        // Kept on the main queue by the main path (a record the dead-letter intake wrote, its receiveCount set, kept its original
        // in the DLQ, where the scan looks), and no longer than the main queue keeps a message: past that it is gone.
        Optional<DeadLetterCopy> refusedKeptSource = stored.filter(r -> r.receiveCount() == null
                        && r.quarantinedAt() != null && r.quarantinedAt().plus(queueRetention).isAfter(now))
                .map(QuarantineRecord::deadLetter).filter(c -> c.state() == DeadLetterCopy.State.REFUSED && c.sourceKept());
        if (refusedKeptSource.isPresent()) {
            // The DLQ refused the copy for good and nothing else held the payload, so the quarantine kept the source message
            // on the main queue for SQS's redrive policy to move: the payload is there, not lost, and reaches the DLQ (where
            // a replay finds it) after the policy's receives.
            ledger.write(quarantined.withVersion(replaying.version()));
            ActionOutcome onMainQueue = new ActionOutcome.Refused(jobId, Refusal.CONFLICT, "job " + jobId
                    + "'s only copy is its source message, kept on the main queue since the dead-letter queue refused its copy ("
                    + refusedKeptSource.get().detail() + "); once the queue's redrive policy has moved it to the dead-letter "
                    + "queue (after " + redriveMaxReceiveCount + " receives), a replay sends it");
            record(key, AuditAction.REPLAY, onMainQueue, actor, reason, quarantined.generation(), quarantined.attempt());
            return onMainQueue;
        }
        if (archive.someHidden()) {
            // Another action (a payload view, another replica's replay) may be holding the copy: not proof of loss.
            ledger.write(quarantined.withVersion(replaying.version()));
            ActionOutcome held = new ActionOutcome.Refused(jobId, Refusal.CONFLICT,
                    "no dead-letter copy of job " + jobId + " is visible right now, but some are held by another action; try again in a minute");
            record(key, AuditAction.REPLAY, held, actor, reason, quarantined.generation(), quarantined.attempt());
            return held;
        }
        if (kept.unreadable() != null) {
            // The vault has an entry that does not open here and the DLQ has no copy: not proof of loss.
            ledger.write(quarantined.withVersion(replaying.version()));
            ActionOutcome unreadable = new ActionOutcome.Refused(jobId, Refusal.PAYLOAD_UNREADABLE, kept.unreadable());
            record(key, AuditAction.REPLAY, unreadable, actor, reason, quarantined.generation(), quarantined.attempt());
            return unreadable;
        }
        if (!scan.complete()) {
            // The scan stopped at its bound in a deep DLQ: the copy may be past where it looked.
            ledger.write(quarantined.withVersion(replaying.version()));
            ActionOutcome notYet = notFoundYet(jobId);
            record(key, AuditAction.REPLAY, notYet, actor, reason, quarantined.generation(), quarantined.attempt());
            return notYet;
        }
        // Keep the generation the job was quarantined at: a copy of it that shows up later is then
        // forwarded to the DLQ as a copy of a parked job, never dropped as stale.
        try {
            ledger.write(quarantined.withVersion(replaying.version()).moveTo(JobState.UNRECOVERABLE, clock.instant()));
        } catch (StoreUnavailable down) {
            if (ledger.stillAt(key, replaying.version())) {
                // It did not land: the job goes back to QUARANTINED, as every other failure after the move to REPLAYING does.
                throw down;
            }
            // It landed (or the ledger cannot say): not put back, since a put-back would conflict with it and say REPLAYING.
            return unanswered(key, AuditAction.REPLAY, down, "the conclusion UNRECOVERABLE (no payload is left anywhere)", "the job is"
                    + " then UNRECOVERABLE", actor, reason, replaying);
        }
        // A record gone since the guard read it has nothing to say: the ledger already does. One a copy's reopen replaced
        // meanwhile (the payload turned up after all) is not this conclusion's to change.
        try {
            stored.filter(r -> r.quarantinedAt() != null).ifPresent(r -> quarantine.concludeUnrecoverable(key, r.quarantinedAt()));
        } catch (RuntimeException e) {
            // The ledger says UNRECOVERABLE and decides; the record keeps its old status until a copy of the payload reopens
            // the job or it expires. The answer stays the conclusion: putting the job back cannot, the ledger has moved.
            LOG.warnf("Job %s concluded UNRECOVERABLE, but its quarantine record was not marked so (%s)", jobId, e.getClass().getSimpleName());
        }
        ActionOutcome gone = new ActionOutcome.Unrecoverable(jobId,
                "no dead-letter copy is left (its retention passed or the queue was purged); nothing was replayed");
        record(key, AuditAction.REPLAY, gone, actor, reason, replaying.generation(), attempt);
        return gone;
    }

    /**
     * Re-issues a replay stuck in REPLAYING (its earlier run died before the copy reached a worker).
     * The dead-letter copy is taken first: if none is left, the earlier copy is on the main queue and
     * nothing is changed; otherwise the next generation goes out and the older copy, if it ever
     * arrives, is dropped as stale.
     */
    private ActionOutcome reissue(LedgerRecord stuck, String actor, String reason, Instant now) {
        String jobId = stuck.jobId();
        JobKey key = JobKey.of(stuck);
        Optional<KeptPayload> inVault;
        try {
            inVault = kept(key).payload();
        } catch (RuntimeException e) {
            return stillStuck(stuck, unavailable(key, e), actor, reason);
        }
        if (inVault.isPresent()) {
            // Still in the vault: the earlier run did not finish its send (or died before discarding it).
            // The next generation goes out; the earlier copy, if it was sent, is dropped as stale.
            LedgerRecord replaying;
            try {
                replaying = ledger.write(stuck.replayed(now));
            } catch (LedgerConflict lost) {
                return conflict(jobId, actor, reason, stuck);
            } catch (RuntimeException e) {
                return stillStuck(stuck, unavailable(key, e), actor, reason);
            }
            return send(replaying, stuck, inVault.get(), actor, reason, now);
        }
        List<ArchivedMessage> copies;
        try {
            copies = archive.take(key);
        } catch (RuntimeException e) {
            return stillStuck(stuck, unavailable(key, e), actor, reason);
        }
        if (copies.isEmpty()) {
            ActionOutcome onItsWay = new ActionOutcome.Refused(jobId, Refusal.CONFLICT, "job " + jobId
                    + " has no dead-letter copy left: its replayed copy is on the main queue; wait for a worker to take it");
            record(key, AuditAction.REPLAY, onItsWay, actor, reason, stuck.generation(), stuck.attempt());
            return onItsWay;
        }
        LedgerRecord replaying;
        try {
            replaying = ledger.write(stuck.replayed(now));
        } catch (LedgerConflict lost) {
            giveBack(key, copies);
            return conflict(jobId, actor, reason, stuck);
        } catch (RuntimeException e) {
            giveBack(key, copies);
            return stillStuck(stuck, unavailable(key, e), actor, reason);
        }
        return send(replaying, stuck, copies, actor, reason, now);
    }

    /**
     * A re-issue that failed before its write was answered (the vault, the dead-letter queue or the ledger did not answer): the job
     * stays REPLAYING, the attempt is audited, and the operator may re-issue it again.
     */
    private ActionOutcome stillStuck(LedgerRecord stuck, String why, String actor, String reason) {
        ActionOutcome failed = new ActionOutcome.Refused(stuck.jobId(), Refusal.UNAVAILABLE,
                why + "; the re-issue did not go on and the job stays REPLAYING: replay it again to re-issue it (a write whose answer"
                        + " was lost may have moved it to a newer generation, which can be re-issued once replay.settle-time has passed)");
        record(JobKey.of(stuck), AuditAction.REPLAY, failed, actor, reason, stuck.generation(), stuck.attempt());
        return failed;
    }

    /**
     * The ledger did not answer an action's move of the job. Nothing after it runs; the caller is answered UNAVAILABLE (503) and
     * the attempt is audited, saying whether the move may have landed (its answer lost after DynamoDB took it) and, if so, what
     * finishes the action: the trail must not be silent about a job that may have moved.
     */
    private ActionOutcome unanswered(JobKey key, AuditAction action, StoreUnavailable down, String move, String ifLanded, String actor,
                                     String reason, LedgerRecord before) {
        LOG.warnf("Job %s: %s was not answered by the ledger (%s)", key.jobId(), move, down.getMessage());
        String detail = down.outcomeUnknown()
                ? down.getMessage() + " on " + move + ", which may have landed all the same; " + ifLanded
                : down.getMessage() + " on " + move + "; nothing changed, try again";
        ActionOutcome refused = new ActionOutcome.Refused(key.jobId(), Refusal.UNAVAILABLE, detail);
        record(key, action, refused, actor, reason, before.generation(), before.attempt());
        return refused;
    }

    private ActionOutcome conflict(String jobId, String actor, String reason, LedgerRecord before) {
        ActionOutcome conflict = new ActionOutcome.Refused(jobId, Refusal.CONFLICT, "another operator action changed job " + jobId + " first");
        record(JobKey.of(before.tenant(), before.jobId()), AuditAction.REPLAY, conflict, actor, reason, before.generation(), before.attempt());
        return conflict;
    }

    /**
     * Sends the replayed copy, then deletes the dead-letter copies; a failure before the send puts everything back, one
     * after it (a delete refused) does not undo the replay.
     */
    private ActionOutcome send(LedgerRecord replaying, LedgerRecord before, List<ArchivedMessage> copies, String actor, String reason,
                               Instant now) {
        String jobId = replaying.jobId();
        JobKey key = JobKey.of(replaying);
        int attempt = replaying.attempt() + 1;
        ArchivedMessage payload = copies.get(0);
        try {
            // The record says REPLAYING before the copy goes out, so a worker that finishes it first is not overwritten.
            markReplaying(key, replaying.generation(), now, actor, reason);
        } catch (RuntimeException e) {
            giveBack(key, copies);
            return putBack(replaying, before, Refusal.UNAVAILABLE, unavailable(key, e), actor, reason);
        }
        try {
            if (!pacer.acquire()) {
                throw new FleetRateTaken();
            }
            sender.send(payload.body(), replayAttributes(jobId, payload.attributes(), replaying.generation()));
        } catch (FleetRateTaken busy) {
            giveBack(key, copies);
            return putBack(replaying, before, Refusal.UNAVAILABLE, "nothing was sent: " + busy.getMessage() + "; try again", actor, reason);
        } catch (RuntimeException | InterruptedException e) {
            return asideInterrupt(() -> {
                giveBack(key, copies);
                return putBack(replaying, before, Refusal.SEND_FAILED,
                        "the main queue did not take the replayed message (" + e.getClass().getSimpleName() + ")", actor, reason);
            });
        }
        // The replayed copy is out: an interrupt that came meanwhile must not stop its clean-up or its audit entry.
        return asideInterrupt(() -> {
            try {
                archive.delete(copies);
            } catch (RuntimeException e) {
                // The replay stands: the old copies carry the old generation (stale if ever received) and expire with their
                // retention.
                LOG.warnf("Job %s: deleting its dead-letter copies after the replay failed (%s); they expire with their retention", jobId,
                        e.getClass().getSimpleName());
            }
            ActionOutcome done = new ActionOutcome.Replayed(jobId, replaying.generation(), attempt);
            record(key, AuditAction.REPLAY, done, actor, reason, replaying.generation(), attempt);
            LOG.infof("Job %s replayed by %s as generation %d (attempt %d)", jobId, actor, replaying.generation(), attempt);
            return done;
        });
    }

    /**
     * Sends the replayed copy from the vault, then forgets the payload and deletes the dead-letter copies a
     * scan finds (a deep DLQ may hide some: they carry the old generation and are dropped as stale if they
     * ever reach a worker). A failed send changes nothing.
     */
    private ActionOutcome send(LedgerRecord replaying, LedgerRecord before, KeptPayload payload, String actor, String reason, Instant now) {
        String jobId = replaying.jobId();
        JobKey key = JobKey.of(replaying);
        int attempt = replaying.attempt() + 1;
        try {
            markReplaying(key, replaying.generation(), now, actor, reason);
        } catch (RuntimeException e) {
            return putBack(replaying, before, Refusal.UNAVAILABLE, unavailable(key, e), actor, reason);
        }
        try {
            if (!pacer.acquire()) {
                throw new FleetRateTaken();
            }
            sender.send(payload.body(), replayAttributes(jobId, payload.attributes(), replaying.generation()));
        } catch (FleetRateTaken busy) {
            return putBack(replaying, before, Refusal.UNAVAILABLE, "nothing was sent: " + busy.getMessage() + "; try again", actor, reason);
        } catch (RuntimeException | InterruptedException e) {
            return asideInterrupt(() -> putBack(replaying, before, Refusal.SEND_FAILED,
                    "the main queue did not take the replayed message (" + e.getClass().getSimpleName() + ")", actor, reason));
        }
        // The replayed copy is out: an interrupt that came meanwhile must not stop its clean-up or its audit entry.
        return asideInterrupt(() -> {
            forgetLater(key, replaying.generation());
            ActionOutcome done = new ActionOutcome.Replayed(jobId, replaying.generation(), attempt);
            record(key, AuditAction.REPLAY, done, actor, reason, replaying.generation(), attempt);
            LOG.infof("Job %s replayed by %s as generation %d (attempt %d, payload from the vault)", jobId, actor, replaying.generation(),
                    attempt);
            return done;
        });
    }

    /**
     * Marks the quarantine record REPLAYING with this replay in its history. The guard found the record a moment ago; one
     * gone since (its TTL passed) has nothing to mark, and the ledger, which decides, says REPLAYING: the replay goes on.
     */
    private void markReplaying(JobKey key, int generation, Instant now, String actor, String reason) {
        if (!quarantine.updateStatus(key, QuarantineStatus.REPLAYING, Optional.of(new ReplayEntry(generation, now, actor, reason, null)))) {
            LOG.infof("Job %s: its quarantine record is gone (past its retention); the replay goes on without it", key.jobId());
        }
    }

    /**
     * A replay that failed after its move to REPLAYING (a store or queue did not answer, the send failed) puts the job back
     * where it was: the ledger at the generation it had (one conditional write over the REPLAYING version) and the record
     * QUARANTINED. The failure is audited and answered with its refusal. A job that cannot be put back (the ledger does not
     * answer either) stays REPLAYING, and a replay re-issues it once {@code replay.settle-time} has passed.
     */
    private ActionOutcome putBack(LedgerRecord replaying, LedgerRecord before, Refusal refusal, String why, String actor, String reason) {
        JobKey key = JobKey.of(replaying);
        String detail = why + "; the job stays " + before.state();
        try {
            ledger.write(before.withVersion(replaying.version()));
        } catch (RuntimeException e) {
            detail = why + "; putting the job back failed too (" + e.getClass().getSimpleName() + "): " + whereNow(key);
        }
        try {
            quarantine.recordReplayOutcome(key, replaying.generation(), QuarantineStatus.QUARANTINED, refusal.name());
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: its quarantine record was not put back to QUARANTINED after a failed replay (%s)", key.jobId(),
                    e.getClass().getSimpleName());
        }
        ActionOutcome failed = new ActionOutcome.Refused(key.jobId(), refusal, detail);
        record(key, AuditAction.REPLAY, failed, actor, reason, replaying.generation(), replaying.attempt() + 1);
        return failed;
    }

    /**
     * Runs what follows a send (a failed send's put-back, a sent one's clean-up and audit entry) with the thread's interrupt set
     * aside, and sets it again afterwards. A thread interrupted while it paced or sent (Quarkus interrupts its request threads
     * at shutdown) would otherwise fail every call of it at once, as the AWS SDK does on an interrupted thread: the job left
     * REPLAYING with nothing sent, or a replay that went out unaudited.
     */
    private static ActionOutcome asideInterrupt(java.util.function.Supplier<ActionOutcome> putBack) {
        boolean interrupted = Thread.interrupted();
        try {
            return putBack.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Where a job whose put-back failed is now, as the ledger says (the put-back's own write may have landed unanswered). */
    private String whereNow(JobKey key) {
        try {
            return ledger.findOwn(key).map(l -> l.state() == JobState.REPLAYING
                    ? "it stays REPLAYING until replay.settle-time has passed, then a replay re-issues it"
                    : "the ledger says it is " + l.state() + " at generation " + l.generation()).orElse("its ledger record is gone");
        } catch (RuntimeException e) {
            return "it may stay REPLAYING (the ledger did not answer a read either); once replay.settle-time has passed a replay"
                    + " re-issues it";
        }
    }

    /** The replay rate stayed taken by other replays for {@link ReplayPacing#MAX_WAIT}: nothing was sent. */
    private static final class FleetRateTaken extends RuntimeException {
        FleetRateTaken() {
            super("the replay rate (this instance's own pace, or the fleet's count) stayed taken by other replays for "
                    + ReplayPacing.MAX_WAIT.toSeconds() + "s", null, false, false);
        }
    }

    /** Why a replay could not go on, for the operator and the audit: what did not answer. */
    private static String unavailable(JobKey key, RuntimeException e) {
        LOG.warnf(e, "Job %s: its replay could not go on; it is put back", key.jobId());
        return "nothing was sent: " + (e instanceof StoreUnavailable ? e.getMessage() : "the replay failed (" + e.getClass().getSimpleName() + ")");
    }

    /** Releases the dead-letter copies a failed replay held; those a failed release keeps show again after their visibility timeout. */
    private void giveBack(JobKey key, List<ArchivedMessage> copies) {
        try {
            archive.release(copies);
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: its dead-letter copies were not released (%s); they show again after their visibility timeout",
                    key.jobId(), e.getClass().getSimpleName());
        }
    }

    /** Whether the kept payload went (or none was kept). */
    private boolean discardKept(JobKey key, int below) {
        try {
            vault.discard(key, below);
            return true;
        } catch (RuntimeException e) {
            // The entry expires with the quarantine record; until then a replay finds an older generation (shown to no one
            // once the job is past the states that keep a payload).
            LOG.warnf("Job %s: forgetting its kept payload failed (%s); it expires with its record", key.jobId(),
                    e.getClass().getSimpleName());
            return false;
        }
    }

    /** What a resolve whose discard of the kept payload failed says: the clean-up is unfinished, and what finishes it. */
    private static final String KEPT_NOT_DISCARDED = "its kept payload was not discarded (the vault did not answer); it is shown to"
            + " no one, its discard is tried again in the background for a few minutes, and a resolve again discards it too";

    /** When a failed discard of a resolved job's kept payload is tried again, after the resolve. */
    private static final List<java.time.Duration> DISCARD_RETRIES = List.of(java.time.Duration.ofSeconds(1), java.time.Duration.ofSeconds(5),
            java.time.Duration.ofSeconds(30), java.time.Duration.ofMinutes(2));

    /**
     * Discards the kept payload of a resolved job; one that fails is tried again in the background ({@link #DISCARD_RETRIES}),
     * as the operator's console offers no resolve of a job already resolved. Whether it went at once.
     */
    private boolean discardResolved(JobKey key) {
        if (discardKept(key, Integer.MAX_VALUE)) {
            return true;
        }
        Thread.ofVirtual().name("poison-guard-discard-retry").start(() -> {
            for (java.time.Duration wait : DISCARD_RETRIES) {
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException e) {
                    return;
                }
                if (discardKept(key, Integer.MAX_VALUE)) {
                    LOG.infof("Job %s: its kept payload was discarded on a retry after its resolve", key.jobId());
                    return;
                }
            }
            LOG.warnf("Job %s: its kept payload could not be discarded after its resolve; it expires with its TTL, shown to no one",
                    key.jobId());
        });
        return false;
    }

    /**
     * Deletes the DLQ copies of generations below {@code below}, now, in one pass (an operator waits on it); copies another
     * reader held are swept in the background. How many it deleted.
     */
    private int sweepCopies(JobKey key, int below) {
        try {
            return sweeper.now(key, below);
        } catch (RuntimeException e) {
            // Leftovers expire with their retention and are dropped as stale meanwhile.
            LOG.warnf("Job %s: cleaning up its dead-letter copies failed (%s); leftovers expire with their retention", key.jobId(),
                    e.getClass().getSimpleName());
            return 0;
        }
    }

    /**
     * After a replay from the vault sent the payload on as generation {@code below}: the vault entry and the DLQ copies of the
     * generations before it go (only those: the replayed copy may already have run, failed and been quarantined again, and
     * its new entry and copy must stay). The kept payload goes at once; the payload is already on its way, so the operator is
     * answered then and the dead-letter copies are looked for in the background, in scans shared with the other jobs
     * waiting (a copy missed expires with its retention and is dropped as stale meanwhile).
     */
    private void forgetLater(JobKey key, int below) {
        discardKept(key, below);
        sweeper.later(key, below);
    }

    /** The vault's answer for a job: its payload, or why an entry that exists does not open. */
    private record Kept(Optional<KeptPayload> payload, String unreadable) {
    }

    private Kept kept(JobKey key) {
        try {
            return new Kept(vault.find(key), null);
        } catch (VaultUnreadable e) {
            return new Kept(Optional.empty(), e.getMessage() + "; nothing changed");
        }
    }

    /** Discards a quarantined job for good: it must not run again, and its dead-letter copies go. */
    public ActionOutcome resolve(JobKey key, String actor, String reason) {
        String jobId = key.jobId();
        Optional<LedgerRecord> current = ledger.findOwn(key);
        ActionOutcome outcome;
        if (current.isEmpty()) {
            outcome = new ActionOutcome.Refused(jobId, Refusal.NOT_FOUND, "no ledger record for job " + jobId);
        } else if (current.get().state() == JobState.RESOLVED) {
            // Resolved already, maybe by a call whose answer was lost (or whose worker stopped) before its clean-up: the
            // clean-up is finished now. The record is moved last, so one already RESOLVED (or gone) says it was done.
            boolean done = quarantine.find(key).map(r -> r.status() == QuarantineStatus.RESOLVED).orElse(true);
            // A kept payload whose discard failed is discarded again either way (one idempotent delete).
            outcome = done ? discardAgain(key) : cleanUp(key);
        } else if (current.get().state() != JobState.QUARANTINED) {
            outcome = new ActionOutcome.Refused(jobId, Refusal.NOT_QUARANTINED, "job " + jobId + " is " + current.get().state()
                    + "; only QUARANTINED jobs can be resolved");
        } else {
            try {
                ledger.write(current.get().moveTo(JobState.RESOLVED, clock.instant()));
                outcome = cleanUp(key);
            } catch (LedgerConflict lost) {
                outcome = new ActionOutcome.Refused(jobId, Refusal.CONFLICT, "another operator action changed job " + jobId + " first");
            } catch (StoreUnavailable down) {
                return unanswered(key, AuditAction.RESOLVE, down, "the move to RESOLVED", "the job is then RESOLVED with its kept payload"
                        + " and dead-letter copies still there: resolve it again to finish the clean-up", actor, reason, current.get());
            }
        }
        record(key, AuditAction.RESOLVE, outcome, actor, reason, current.map(LedgerRecord::generation).orElse(null),
                current.map(LedgerRecord::attempt).orElse(null));
        return outcome;
    }

    /**
     * A resolved job's clean-up: its kept payload and dead-letter copies go, then its record is moved to RESOLVED, which says
     * the clean-up is done. A discard of the kept payload that failed is said in the answer (a resolve again discards it;
     * meanwhile the payload view shows it to no one); the record moves all the same, so the job stops counting as
     * quarantined.
     */
    private ActionOutcome.Resolved cleanUp(JobKey key) {
        boolean keptGone = discardResolved(key);
        int discarded = sweepCopies(key, Integer.MAX_VALUE);
        markResolved(key);
        return new ActionOutcome.Resolved(key.jobId(), discarded, keptGone ? null : KEPT_NOT_DISCARDED);
    }

    /** A resolve of a job whose clean-up is done but for a kept payload whose discard may have failed: discarded again. */
    private ActionOutcome.Resolved discardAgain(JobKey key) {
        return new ActionOutcome.Resolved(key.jobId(), 0, discardResolved(key) ? null : KEPT_NOT_DISCARDED);
    }

    /**
     * Moves the quarantine record of a job just resolved to RESOLVED. The ledger, already RESOLVED, decides: a record past
     * its TTL (the ledger item of a quarantined job never expires) or not written yet leaves nothing to move, and one the
     * table does not take now keeps its old status until it expires; neither undoes the resolve.
     */
    private void markResolved(JobKey key) {
        try {
            if (!quarantine.updateStatus(key, QuarantineStatus.RESOLVED, Optional.empty())) {
                LOG.infof("Job %s resolved without a quarantine record to move (past its retention or not written yet)", key.jobId());
            }
        } catch (RuntimeException e) {
            LOG.warnf("Job %s resolved, but its quarantine record was not moved to RESOLVED (%s); it keeps its old status until it expires",
                    key.jobId(), e.getClass().getSimpleName());
        }
    }

    /** The secure path: the payload of a quarantined job, read from the vault (or its dead-letter copy) and audited. */
    public ActionOutcome payload(JobKey key, String actor, String reason) {
        String jobId = key.jobId();
        Optional<LedgerRecord> current = ledger.findOwn(key);
        ActionOutcome outcome;
        if (current.isEmpty()) {
            outcome = new ActionOutcome.Refused(jobId, Refusal.NOT_FOUND, "no ledger record for job " + jobId);
        } else {
            Kept kept = kept(key);
            JobState state = current.get().state();
            if (kept.payload().isPresent() && (holdsPayload(state) || state == JobState.UNRECOVERABLE)) {
                // Only while the job keeps a payload: an entry whose discard failed after a resolve or a replay is shown to
                // no one (a job resolved for good must not be readable until the entry's TTL).
                outcome = new ActionOutcome.Payload(jobId, kept.payload().get().body(), kept.payload().get().attributes());
            } else if (kept.unreadable() != null && !holdsPayload(state)) {
                outcome = new ActionOutcome.Refused(jobId, Refusal.PAYLOAD_UNREADABLE, kept.unreadable());
            } else if (state == JobState.UNRECOVERABLE && !reopening(key)) {
                outcome = new ActionOutcome.Unrecoverable(jobId, "its payload was concluded gone");
            } else if (!holdsPayload(state) && state != JobState.UNRECOVERABLE) {
                // Nothing of a job in any other state is kept: a scan of the whole dead-letter queue, under the process's one scan
                // lock and hiding every copy meanwhile, would only find nothing (and stall every tenant's replays behind it).
                outcome = new ActionOutcome.Refused(jobId, Refusal.NOT_QUARANTINED, "job " + jobId + " is " + state
                        + ": a payload is kept only while a job is quarantined or its replay is under way");
            } else {
                ArchiveScan scan = archive.find(key);
                List<ArchivedMessage> copies = scan.copies();
                if (copies.isEmpty() && kept.unreadable() != null) {
                    outcome = new ActionOutcome.Refused(jobId, Refusal.PAYLOAD_UNREADABLE, kept.unreadable());
                } else if (copies.isEmpty() && !scan.complete()) {
                    outcome = notFoundYet(jobId);
                } else if (copies.isEmpty() && state == JobState.REPLAYING) {
                    // The replay sent the payload back to the main queue and cleared the vault and the DLQ behind it: not
                    // lost, on its way (a replay whose instance died before it sent is re-issued by a replay).
                    outcome = new ActionOutcome.Refused(jobId, Refusal.NOT_QUARANTINED, "job " + jobId + " is being replayed: its"
                            + " payload went back to the main queue, and is kept again if the job is quarantined again");
                } else if (copies.isEmpty()) {
                    outcome = new ActionOutcome.Unrecoverable(jobId, "no dead-letter copy is left");
                } else {
                    archive.release(copies);
                    outcome = new ActionOutcome.Payload(jobId, copies.get(0).body(), copies.get(0).attributes());
                }
            }
        }
        record(key, AuditAction.VIEW_PAYLOAD, outcome, actor, reason, current.map(LedgerRecord::generation).orElse(null),
                current.map(LedgerRecord::attempt).orElse(null));
        return outcome;
    }

    /**
     * Whether a job the ledger says is UNRECOVERABLE is being quarantined again: a copy of its payload turned up and its
     * record, written before the ledger moves, already says QUARANTINED (and alerted that it can be replayed). With the
     * vault off, that payload is a dead-letter copy, which the view then looks for.
     */
    private boolean reopening(JobKey key) {
        return quarantine.find(key).filter(r -> r.status() == io.poisonguard.quarantine.QuarantineStatus.QUARANTINED).isPresent();
    }

    /** The states in which a job's payload is kept (the vault, a dead-letter copy) for a view to find. */
    private static boolean holdsPayload(JobState state) {
        return state == JobState.QUARANTINED || state == JobState.REPLAYING;
    }

    private static ActionOutcome notFoundYet(String jobId) {
        return new ActionOutcome.Refused(jobId, Refusal.PAYLOAD_NOT_FOUND_YET, "no dead-letter copy of job " + jobId
                + " was found, but the dead-letter queue is deeper than one scan reads; nothing changed, try again later");
    }

    private Optional<ActionOutcome> guard(JobKey key, Optional<LedgerRecord> current) {
        String jobId = key.jobId();
        Optional<QuarantineRecord> record = quarantine.find(key);
        Optional<String> tenantRefusal = current.flatMap(l -> tenants.refusal(l.tenant(), l.jobType()));
        return ReplayGuard.check(jobId, current, record, tenantRefusal, clock.instant(), settleTime, quarantineRetention, queueRetention);
    }

    private void markUnrecoverable(LedgerRecord current, Instant now) {
        try {
            ledger.write(current.moveTo(JobState.UNRECOVERABLE, now));
        } catch (LedgerConflict lost) {
            LOG.debugf("Job %s changed while being marked unrecoverable", current.jobId());
        } catch (StoreUnavailable down) {
            // The answer stays the same (its record is past its retention: nothing holds its payload); the next replay marks it.
            LOG.warnf("Job %s: marking it UNRECOVERABLE was not answered (%s); the next replay concludes it again", current.jobId(),
                    down.getMessage());
        }
    }

    /**
     * The job id (a job whose identity came from its body or its MessageId keeps it only through this attribute) and the
     * new generation, then the original attributes minus what quarantine added, as many as SQS takes: the wire contract's
     * first, then the producer's own by name. The vault keeps all of a job's attributes, up to SQS's 10, so a job sent with
     * nine or ten has more than fit with these two; those left out are named in the log (never their values).
     */
    static Map<String, MessageAttribute> replayAttributes(String jobId, Map<String, MessageAttribute> archived, int generation) {
        Map<String, MessageAttribute> originals = new HashMap<>(archived);
        originals.remove(WireAttributes.FAILURE_CLASS);
        originals.remove(WireAttributes.ATTEMPTS);
        originals.remove(WireAttributes.QUARANTINE_REASON);
        originals.remove(WireAttributes.DEAD_LETTER_RETURNS);
        Map<String, MessageAttribute> own = new LinkedHashMap<>();
        own.put(WireAttributes.JOB_ID, MessageAttribute.string(jobId));
        own.put(WireAttributes.GENERATION, MessageAttribute.number(generation));
        Map<String, MessageAttribute> attrs = WireAttributes.fitted(own, originals);
        List<String> dropped = originals.keySet().stream().filter(k -> !attrs.containsKey(k)).sorted().toList();
        if (!dropped.isEmpty()) {
            LOG.warnf("Replay of job %s as generation %d leaves out attributes %s (SQS allows %d)", jobId, generation, dropped,
                    WireAttributes.SQS_MAX);
        }
        return attrs;
    }

    void record(JobKey key, AuditAction action, ActionOutcome outcome, String actor, String reason, Integer generation, Integer attempt) {
        String result = switch (outcome) {
            case ActionOutcome.Replayed r -> "REPLAYED";
            case ActionOutcome.WouldReplay w -> "WOULD_REPLAY";
            case ActionOutcome.Resolved r -> "RESOLVED";
            case ActionOutcome.Payload p -> "PAYLOAD_SHOWN";
            case ActionOutcome.Refused r -> "REFUSED_" + r.refusal();
            case ActionOutcome.Unrecoverable u -> "UNRECOVERABLE";
        };
        String detail = switch (outcome) {
            case ActionOutcome.Refused r -> r.detail();
            case ActionOutcome.Unrecoverable u -> u.detail();
            case ActionOutcome.Resolved r -> r.discardedCopies() + " dead-letter copies discarded"
                    + (r.unfinished() == null ? "" : "; " + r.unfinished());
            default -> null;
        };
        try {
            audit.append(new AuditEntry(outcome.jobId(), key.tenant(), clock.instant(), actor, action, reason, codeVersion.value(), generation,
                    attempt, result, detail));
        } catch (RuntimeException e) {
            if (!changedTheJob(outcome)) {
                // Nothing happened that the answer would hide: the caller learns the audit trail did not answer (503), and
                // no payload is ever shown without its view audited.
                throw e;
            }
            // The replay went out, the job was resolved or concluded unrecoverable: the answer must say so, as a bulk
            // replay's end does when its entry is not written.
            LOG.errorf("Job %s: %s by %s ended %s but its audit entry was not written (%s)", outcome.jobId(), action, actor, result,
                    e.getClass().getSimpleName());
        }
    }

    /**
     * Whether the outcome tells of a change already made to the job (a replay sent, a resolve, a conclusion of UNRECOVERABLE),
     * which a failed audit write must not hide. A payload view's UNRECOVERABLE changed nothing, but shows nothing either.
     */
    private static boolean changedTheJob(ActionOutcome outcome) {
        return switch (outcome) {
            case ActionOutcome.Replayed r -> true;
            case ActionOutcome.Resolved r -> true;
            case ActionOutcome.Unrecoverable u -> true;
            case ActionOutcome.WouldReplay w -> false;
            case ActionOutcome.Payload p -> false;
            case ActionOutcome.Refused r -> false;
        };
    }
}

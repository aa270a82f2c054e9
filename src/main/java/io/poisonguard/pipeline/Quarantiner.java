package io.poisonguard.pipeline;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.WireSize;
import io.poisonguard.alerts.Alerts;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.observability.Metrics;
import io.poisonguard.observability.Metrics.Outcome;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.DeadLetterRefusals;
import io.poisonguard.quarantine.DeadLetterSink;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.quarantine.ReplayEntry;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Completes a quarantine whose ledger state is already QUARANTINED (or UNRECOVERABLE, whose payload has turned up: once
 * it is kept the job is quarantined again, with a fresh record and one alert): the payload into the vault, the
 * dead-letter copy, then the quarantine record, then the delete from the main queue. When the dead-letter
 * queue refuses the copy for good (SQS: too large, invalid characters), the record and alert are still
 * written, naming the refusal; the source message is deleted when the vault holds the payload and kept
 * for SQS's redrive policy when the vault is off. Each step is safe to repeat, so a crash
 * anywhere leaves a copy that comes back and finishes the job here (invariant 2: may duplicate in
 * the DLQ, never loses).
 */
@Singleton
public class Quarantiner {
    private static final Logger LOG = Logger.getLogger(Quarantiner.class);

    private final QuarantineStore store;
    private final DeadLetterSink deadLetters;
    private final SourceQueue source;
    private final Clock clock;
    private final Metrics metrics;
    private final PoisonGuardConfig config;
    private final Alerts alerts;
    private final DeadLetterRefusals refusals;
    private final PayloadVault vault;
    private final io.poisonguard.owners.OwnerMap owners;
    private final io.poisonguard.ledger.LedgerStore ledger;
    private final java.util.Set<String> disposable;

    public Quarantiner(QuarantineStore store, DeadLetterSink deadLetters, DeadLetterRefusals refusals, SourceQueue source, Clock clock,
                       Metrics metrics, PoisonGuardConfig config, Alerts alerts, PayloadVault vault, io.poisonguard.owners.OwnerMap owners,
                       io.poisonguard.ledger.LedgerStore ledger) {
        this.vault = vault;
        this.owners = owners;
        this.ledger = ledger;
        this.disposable = config.disposableJobTypes().orElse(java.util.Set.of());
        disposable.forEach(type -> java.util.Arrays.stream(io.poisonguard.failure.FailureClass.values()).forEach(c -> metrics.droppedCounter(c, type)));
        this.store = store;
        this.deadLetters = deadLetters;
        this.refusals = refusals;
        this.source = source;
        this.clock = clock;
        this.metrics = metrics;
        this.config = config;
        this.alerts = alerts;
    }

    public void complete(LedgerRecord parked, InboundMessage m, Diagnostics diagnostics) {
        complete(parked, m, diagnostics, false);
    }

    /**
     * As {@link #complete(LedgerRecord, InboundMessage, Diagnostics)} for a copy the intake found parked. Its ledger was
     * read before its payload was kept, and an operator may have moved the job since (a replay that, finding nothing,
     * concludes it UNRECOVERABLE; a resolve): the copy is deleted only while the ledger still says what it was decided
     * on, otherwise a {@link io.poisonguard.ledger.LedgerConflict} has the intake decide it again.
     */
    public void completeCopy(LedgerRecord parked, InboundMessage m, Diagnostics diagnostics) {
        complete(parked, m, diagnostics, true);
    }

    private void complete(LedgerRecord parked, InboundMessage m, Diagnostics diagnostics, boolean recheck) {
        Instant now = clock.instant();
        LedgerRecord record = parked;
        if (record.state() == io.poisonguard.ledger.JobState.RESOLVED) {
            // An operator resolved the job: it must never run, and its payload and dead-letter copies were discarded. A copy
            // that turns up later (a resend, a dead-letter copy moved back) is deleted, as the dead-letter intake deletes one;
            // keeping it again would undo the resolve.
            source.delete(m);
            metrics.outcome(Outcome.DUPLICATE_DROPPED, record.quarantineClass());
            LOG.infof("Job %s: deleted a copy of this job, which an operator resolved", record.jobId());
            return;
        }
        if (record.state() == io.poisonguard.ledger.JobState.DROPPED) {
            drop(record, m, now);
            return;
        }
        Optional<QuarantineRecord> stored = store.find(JobKey.of(record));
        // A disposable type's poison is dropped at its first quarantine. A job of that type with a record (adopted by the
        // dead-letter intake, or quarantined before its type became disposable), or concluded UNRECOVERABLE, is a quarantined
        // job: dropping its copy would leave a record nobody can resolve or replay.
        if (record.state() == io.poisonguard.ledger.JobState.QUARANTINED && stored.isEmpty()
                && record.jobType() != null && disposable.contains(record.jobType()) && record.generation() == 1) {
            drop(record, m, now);
            return;
        }
        // A replay that failed again keeps the replay history of the generations before it.
        List<ReplayEntry> earlier = stored.map(QuarantineRecord::replays).orElse(List.of()).stream()
                .map(e -> e.generation() == parked.generation() && e.outcome() == null
                        ? new ReplayEntry(e.generation(), e.at(), e.actor(), e.reason(), "QUARANTINED again: " + parked.quarantineClass())
                        : e)
                .toList();
        // A job concluded UNRECOVERABLE is quarantined again once its payload is kept (below); its dead-letter copy carries
        // the labels it will then have.
        LedgerRecord back = record.state() == io.poisonguard.ledger.JobState.UNRECOVERABLE
                ? record.reopened(now, stored.map(QuarantineRecord::failureClass).orElse(io.poisonguard.failure.FailureClass.REDRIVEN)) : null;
        LedgerRecord labels = back == null ? record : back;
        // The vault first: once it holds the payload by job id, neither a refused DLQ copy nor a deep DLQ
        // can make the payload unreachable.
        boolean kept = false;
        if (vault.enabled()) {
            try {
                vault.keep(new KeptPayload(JobKey.of(record), record.generation(), m.body(), m.attributes(), now.plus(config.retention().quarantine())));
                kept = true;
            } catch (RuntimeException e) {
                source.changeVisibility(m, config.consumer().visibilityTimeout());
                metrics.outcome(Outcome.LEFT_TO_REDELIVER, record.quarantineClass());
                LOG.errorf("Job %s: keeping its payload in the vault failed (%s); the message stays on the main queue and will be retried",
                        record.jobId(), e.getClass().getSimpleName());
                return;
            }
        }
        // A message too large to copy whole keeps its body and the contract's attributes (admission
        // rejected it, so its own attributes matter less than the payload reaching the DLQ at all).
        InboundMessage copy = WireSize.deadLetterCopyFits(m) ? m : WireSize.contractOnly(m);
        DeadLetterCopy deadLetter;
        try {
            deadLetter = DeadLetterCopy.sent(deadLetters.send(copy, record.jobId(), labels.quarantineClass(), labels.attempt(),
                    labels.quarantineReason()));
        } catch (RuntimeException e) {
            Optional<String> refusal = refusals.permanent(e);
            if (refusal.isEmpty()) {
                // Not durable in the DLQ yet, so the source copy must stay. It comes back, finds the job
                // QUARANTINED and tries again; SQS's redrive backstop takes it if this never succeeds.
                source.changeVisibility(m, config.consumer().visibilityTimeout());
                metrics.outcome(Outcome.LEFT_TO_REDELIVER, record.quarantineClass());
                LOG.errorf("Job %s: dead-letter copy failed (%s); the message stays on the main queue and will be retried",
                        record.jobId(), e.getClass().getSimpleName());
                return;
            }
            // Trying again cannot help, and waiting for it would hide the quarantine: record and alert now.
            // The vault holds the payload; without it nothing else does, so the source message stays for
            // SQS's redrive policy.
            deadLetter = DeadLetterCopy.refused(refusal.get(), !kept);
        }
        // Whoever writes the record first sends the one alert; the record names where the payload is.
        io.poisonguard.owners.OwnerMap.Assignment owner = owners.assign(record.tenant(), record.jobType());
        boolean first;
        boolean reopening = back != null;
        if (reopening) {
            first = reopen(record, back, m, diagnostics, deadLetter, owner, now);
            // Then the ledger. A conflict means another copy moved it: this one is decided again and finds it QUARANTINED.
            record = ledger.write(back);
        } else {
            first = store.putIfAbsent(QuarantineRecord.of(record, diagnostics, m.messageId(), now, config.retention().quarantine(),
                    earlier, deadLetter, io.poisonguard.quarantine.Triage.owned(owner.owner(), owner.defaulted())));
            if (first) {
                told(record, owner, deadLetter);
            }
            if (recheck) {
                // A replay moves the ledger before it looks for the payload: while it still says what this copy read, a
                // replay that follows finds what was kept above.
                if (!ledger.stillAt(JobKey.of(record), record.version())) {
                    throw new io.poisonguard.ledger.LedgerConflict(record.jobId(), record.version());
                }
            }
        }
        if (deadLetter.sourceKept()) {
            try {
                source.changeVisibility(m, config.consumer().visibilityTimeout());
            } catch (RuntimeException e) {
                // The record is written and is told below; the copy shows again sooner and finds the job quarantined.
                LOG.warnf("Job %s: hiding its kept source message failed (%s)", record.jobId(), e.getClass().getSimpleName());
            }
            metrics.outcome(Outcome.LEFT_TO_REDELIVER, record.quarantineClass());
            LOG.errorf("Job %s: the dead-letter queue refused its copy (%s); quarantined, and the message stays on the main queue"
                    + " for the redrive policy", record.jobId(), deadLetter.detail());
        } else {
            if (deadLetter.state() == DeadLetterCopy.State.REFUSED) {
                LOG.errorf("Job %s: the dead-letter queue refused its copy (%s); quarantined, its payload is in the vault",
                        record.jobId(), deadLetter.detail());
            }
            source.delete(m);
            metrics.outcome(Outcome.QUARANTINED, record.quarantineClass());
        }
        if (!first) {
            LOG.infof("Job %s: another copy forwarded to the dead-letter queue (already quarantined)", record.jobId());
        }
    }

    /** The one alert of a quarantine, from whoever wrote its record: sent before the copy is deleted. */
    private void told(LedgerRecord record, io.poisonguard.owners.OwnerMap.Assignment owner, DeadLetterCopy deadLetter) {
        metrics.quarantined(record.quarantineClass());
        alerts.quarantined(record, owner);
        if (record.generation() > 1) {
            alerts.replayOutcome(record);
        }
        LOG.infof("Job %s quarantined: class=%s attempts=%d generation=%d dlq=%s", record.jobId(), record.quarantineClass(),
                record.attempt(), record.generation(), deadLetter);
    }

    /**
     * The record of a job concluded UNRECOVERABLE whose payload is kept again (vault, dead-letter copy): written before the
     * ledger leaves UNRECOVERABLE, so nothing else acts on the job meanwhile (a replay or resolve is refused), in place of
     * the record read just before (the concluding replay writes the ledger first and its record after, and may not have
     * got that far). A record dated after the conclusion is a reopen's already (a worker stopped before moving the
     * ledger): nothing is written again. Whoever writes it alerts, at once: the one alert of the reopen, which is not a
     * replay's outcome.
     */
    private boolean reopen(LedgerRecord gone, LedgerRecord back, InboundMessage m, Diagnostics diagnostics, DeadLetterCopy deadLetter,
                           io.poisonguard.owners.OwnerMap.Assignment owner, Instant now) {
        QuarantineStore.ReopenStep step = store.reopenRecord(gone, now, (at, latest) -> QuarantineRecord.of(back, diagnostics,
                m.messageId(), at, config.retention().quarantine(), latest.map(QuarantineRecord::replays).orElse(List.of()), deadLetter,
                io.poisonguard.quarantine.Triage.reopenedOver(latest, owner.owner(), owner.defaulted())));
        if (step == QuarantineStore.ReopenStep.CHANGED) {
            throw new io.poisonguard.ledger.LedgerConflict(gone.jobId(), gone.version());
        }
        if (step == QuarantineStore.ReopenStep.WRITTEN_BEFORE) {
            return false;
        }
        metrics.quarantined(back.quarantineClass());
        alerts.quarantined(back, owner);
        LOG.warnf("Job %s: a copy of its payload, concluded gone, turned up; quarantined again and can be replayed: class=%s"
                + " generation=%d dlq=%s", back.jobId(), back.quarantineClass(), back.generation(), deadLetter);
        return true;
    }

    /**
     * Poison of a disposable job type: the ledger says DROPPED (so no copy runs again), the message is deleted, and
     * nothing else is kept: no dead-letter copy, no record, no payload. Counted and logged with id and reason. A
     * replayed generation is never dropped: someone chose to run it again.
     */
    private void drop(LedgerRecord record, InboundMessage m, Instant now) {
        if (record.state() != io.poisonguard.ledger.JobState.DROPPED) {
            try {
                ledger.write(record.moveTo(io.poisonguard.ledger.JobState.DROPPED, now));
            } catch (RuntimeException e) {
                // The copy stays and comes back: the job is QUARANTINED in the ledger, and the next copy drops it.
                source.changeVisibility(m, config.consumer().visibilityTimeout());
                metrics.outcome(Outcome.LEFT_TO_REDELIVER, record.quarantineClass());
                LOG.warnf("Job %s: recording the drop failed (%s); the message stays and will be dropped when it returns",
                        record.jobId(), e.getClass().getSimpleName());
                return;
            }
            metrics.dropped(record.quarantineClass(), record.jobType());
            LOG.infof("Job %s dropped, not quarantined (disposable job type %s): class=%s attempts=%d reason=%s", record.jobId(),
                    record.jobType(), record.quarantineClass(), record.attempt(), record.quarantineReason());
        }
        source.delete(m);
        metrics.outcome(Outcome.DROPPED_DISPOSABLE, record.quarantineClass());
    }
}

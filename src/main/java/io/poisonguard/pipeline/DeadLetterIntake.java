package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.JobIdentity;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireSize;
import io.poisonguard.admission.Preflight;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.alerts.Alerts;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.disposition.Adoption;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.DeadLetterInbox;
import io.poisonguard.quarantine.DeadLetterRefusals;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import io.poisonguard.quarantine.DeadLetterSink;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The dead-letter intake: adopts messages that reached the DLQ without the service (SQS's redrive
 * backstop after {@code resources.redrive-max-receive-count} receives, or an operator moving them by
 * hand), so each such job gets a ledger state, a quarantine record and one alert like any other.
 *
 * <p>What marks a message as adopted is the message itself: the intake sends a copy with the quarantine
 * attributes ({@code job-id}, {@code failure-class}, {@code attempts}, {@code quarantine-reason}) through
 * the same {@link DeadLetterSink} the quarantine uses, and deletes the original only after that copy,
 * the ledger and the record are durable. A message with {@code failure-class} is never looked at
 * again. Re-sending rather than keeping the original is what keeps replay working: the payload archive
 * finds a job's copies by their {@code job-id} attribute, which an orphan whose identity came from its
 * body or its MessageId does not carry. Every step is safe to repeat: a crash between them leaves the
 * original in the DLQ, the next sweep adopts it again, the record's conditional put lets only the first
 * writer alert, and at worst the DLQ holds two copies of the job (replay takes and deletes them all).
 */
@ApplicationScoped
public class DeadLetterIntake {
    private static final Logger LOG = Logger.getLogger(DeadLetterIntake.class);
    /** How long a sweep keeps what it received hidden; far above the handful of writes an adoption takes. */
    static final Duration HOLD = Duration.ofSeconds(30);

    private final DeadLetterInbox inbox;
    private final DeadLetterSink deadLetters;
    private final LedgerStore ledger;
    private final QuarantineStore quarantine;
    private final Decisions decisions;
    private final Preflight preflight;
    private final Alerts alerts;
    private final Metrics metrics;
    private final Clock clock;
    private final PoisonGuardConfig config;
    private final LedgerGate gate;
    private final PayloadVault vault;
    private final DeadLetterRefusals refusals;
    private final io.poisonguard.owners.OwnerMap owners;
    private final ReentrantLock sweeping = new ReentrantLock();
    private volatile boolean started;

    public DeadLetterIntake(DeadLetterInbox inbox, DeadLetterSink deadLetters, LedgerStore ledger, QuarantineStore quarantine,
                            Decisions decisions, Preflight preflight, Alerts alerts, Metrics metrics, Clock clock, PoisonGuardConfig config,
                            LedgerGate gate, PayloadVault vault, DeadLetterRefusals refusals, io.poisonguard.owners.OwnerMap owners) {
        this.owners = owners;
        this.vault = vault;
        this.refusals = refusals;
        this.inbox = inbox;
        this.deadLetters = deadLetters;
        this.ledger = ledger;
        this.quarantine = quarantine;
        this.decisions = decisions;
        this.preflight = preflight;
        this.alerts = alerts;
        this.metrics = metrics;
        this.clock = clock;
        this.config = config;
        this.gate = gate;
    }

    /** Called once the queues and tables exist (after the boot-time bootstrap), so no sweep reads missing ones. */
    public void start() {
        started = true;
    }

    /** Called at shutdown: no sweep starts once the beans it needs may be going away. */
    public void stop() {
        started = false;
    }

    @Scheduled(every = "${poison-guard.dead-letter.sweep-interval:1m}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        // While the ledger does not answer an adoption cannot be recorded; the DLQ keeps the copies meanwhile.
        if (!started || !config.deadLetter().enabled() || !gate.open()) {
            return;
        }
        try {
            sweep();
        } catch (StoreUnavailable e) {
            if (e.ledger()) {
                gate.unavailable(e);
                LOG.warnf("Dead-letter sweep stopped: the ledger does not answer; it resumes with consumption");
            } else {
                LOG.warnf("Dead-letter sweep stopped: %s; the next one tries again", e.getMessage());
            }
        } catch (RuntimeException e) {
            LOG.warnf(e, "Dead-letter sweep failed; the next one tries again");
        }
    }

    /**
     * One sweep: looks at up to {@code dead-letter.max-per-sweep} DLQ messages and adopts those without a
     * {@code failure-class} attribute. Returns how many jobs it adopted. One sweep at a time per process;
     * other processes are kept apart by the messages' visibility.
     */
    public int sweep() {
        if (!sweeping.tryLock()) {
            return 0;
        }
        List<InboundMessage> keep = new ArrayList<>();
        try {
            int budget = config.deadLetter().maxPerSweep();
            int adopted = 0;
            Set<String> seen = new HashSet<>();
            while (budget > 0) {
                List<InboundMessage> batch = inbox.receive(Math.min(10, budget), HOLD);
                if (batch.isEmpty()) {
                    break;
                }
                budget -= batch.size();
                boolean wrapped = false;
                for (InboundMessage m : batch) {
                    wrapped |= !seen.add(m.messageId());
                    if (m.attribute(WireAttributes.FAILURE_CLASS).isPresent() || !adopt(m)) {
                        keep.add(m);
                    } else {
                        adopted++;
                    }
                }
                // Give back what stays at once, batch by batch: a replay's or payload view's scan of the DLQ
                // must not find a quarantined job's copy hidden by a sweep that is still running.
                inbox.release(keep);
                keep.clear();
                if (wrapped) {
                    break;
                }
            }
            return adopted;
        } finally {
            try {
                inbox.release(keep);
            } finally {
                sweeping.unlock();
            }
        }
    }

    /** Adopts one orphan; true when its original was replaced by a quarantine copy (or was a leftover and deleted). */
    private boolean adopt(InboundMessage m) {
        String jobId = JobIdentity.of(m).jobId();
        JobKey key = JobKey.of(m.attribute(WireAttributes.TENANT).orElse(null), jobId);
        int generation = m.attribute(WireAttributes.GENERATION).map(DeadLetterIntake::parseGeneration).orElse(1);
        Instant now = clock.instant();
        LedgerRecord current = ledger.findOwn(key).orElseGet(() -> LedgerRecord.fresh(jobId, key.tenant(),
                io.poisonguard.admission.Preflight.recordableJobType(m.attribute(WireAttributes.JOB_TYPE)), generation, now));
        LedgerRecord parked;
        // The stored record, read when the job is parked already: a quarantine at its generation concluded UNRECOVERABLE is reopened.
        Optional<QuarantineRecord> stored = Optional.empty();
        boolean wasParked = false;
        int returnedBefore = Decisions.countedReturns(m.attribute(WireAttributes.DEAD_LETTER_RETURNS), current);
        switch (decisions.adopt(current, generation, m.receiveCount(), config.resources().redriveMaxReceiveCount(), returnedBefore, now)) {
            case Adoption.Busy busy -> {
                LOG.debugf("Job %s: a dead-letter copy waits (an attempt holds the lease, or a replay is under way)", jobId);
                return false;
            }
            case Adoption.GiveBack back -> {
                giveBack(m, jobId, Decisions.deadLetterReturns(returnedBefore + 1, current), back.why());
                return false;
            }
            case Adoption.Finished finished -> {
                inbox.delete(m);
                LOG.infof("Job %s: deleted a copy found in the dead-letter queue: %s", jobId, finished.why());
                return false;
            }
            case Adoption.AlreadyParked already -> {
                parked = already.current();
                wasParked = true;
                stored = quarantine.find(key);
                boolean reopening = parked.state() == io.poisonguard.ledger.JobState.UNRECOVERABLE;
                if (!reopening && !vault.enabled() && stored.map(r -> r.deadLetter() != null
                        && r.deadLetter().state() == DeadLetterCopy.State.REFUSED).orElse(false)) {
                    // The DLQ refused this job's labelled copy for good and nothing else holds its payload: the original
                    // stays as it is (a replay finds it by its job id), and it is not offered to the DLQ again every sweep.
                    LOG.debugf("Job %s: its dead-letter original stays as it is (the labelled copy was refused)", jobId);
                    return false;
                }
            }
            case Adoption.Quarantine q -> {
                try {
                    parked = ledger.write(q.next());
                } catch (LedgerConflict lost) {
                    LOG.debugf("Job %s changed while its dead-letter copy was adopted; the next sweep decides again", jobId);
                    return false;
                }
            }
        }
        // A job concluded UNRECOVERABLE is quarantined again once its payload is kept (below); its labelled copy carries the
        // labels it will then have.
        LedgerRecord back = parked.state() == io.poisonguard.ledger.JobState.UNRECOVERABLE
                ? parked.reopened(now, stored.map(QuarantineRecord::failureClass).orElse(FailureClass.REDRIVEN)) : null;
        LedgerRecord labels = back == null ? parked : back;
        FailureClass failureClass = labels.quarantineClass() == null ? FailureClass.REDRIVEN : labels.quarantineClass();
        boolean kept = false;
        if (vault.enabled()) {
            // The original is the payload until the vault holds it; it is deleted only after that.
            vault.keep(new KeptPayload(key, parked.generation(), m.body(), m.attributes(), now.plus(config.retention().quarantine())));
            kept = true;
        }
        DeadLetterCopy copy;
        // Whether the original stays in the DLQ as it came: the queue will never take the labelled copy and nothing else
        // holds the payload (the vault off), so the original is the payload, and the record and alert say so now, not never.
        boolean originalStays = false;
        // One too large to copy whole with its labels keeps its body and the contract's attributes, as a quarantine's does.
        InboundMessage labelled = WireSize.deadLetterCopyFits(m) ? m : WireSize.contractOnly(m);
        try {
            copy = DeadLetterCopy.sent(deadLetters.send(labelled, jobId, failureClass, labels.attempt(), labels.quarantineReason()));
        } catch (RuntimeException e) {
            Optional<String> refusal = refusals.permanent(e);
            if (refusal.isEmpty()) {
                // The original stays in the DLQ and the ledger says QUARANTINED: the next sweep finishes the adoption.
                LOG.warnf("Job %s: re-sending its dead-letter copy failed (%s); the next sweep tries again", jobId,
                        e.getClass().getSimpleName());
                return false;
            }
            originalStays = !kept;
            // With the vault on it holds the payload, and the record names the refusal.
            copy = originalStays ? DeadLetterCopy.refused(refusal.get() + " (the original stays in the dead-letter queue as it came)", true)
                    : DeadLetterCopy.refused(refusal.get(), false);
        }
        io.poisonguard.owners.OwnerMap.Assignment owner = owners.assign(parked.tenant(), parked.jobType());
        boolean first;
        boolean reopening = back != null;
        if (reopening) {
            // Its payload was concluded gone, and here it is, kept: the job waits in quarantine again and can be replayed. The
            // record first, in place of the one read just before, then the ledger (see Quarantiner#reopen).
            DeadLetterCopy labelledCopy = copy;
            QuarantineStore.ReopenStep step = quarantine.reopenRecord(parked, now, (at, latest) -> QuarantineRecord.of(back,
                    preflight.check(m).diagnostics(), m.messageId(), at, config.retention().quarantine(),
                    latest.map(QuarantineRecord::replays).orElse(List.of()), labelledCopy,
                    io.poisonguard.quarantine.Triage.reopenedOver(latest, owner.owner(), owner.defaulted())).withReceiveCount(m.receiveCount()));
            if (step == QuarantineStore.ReopenStep.CHANGED) {
                LOG.debugf("Job %s changed while its dead-letter copy was adopted; the next sweep decides again", jobId);
                return false;
            }
            first = step == QuarantineStore.ReopenStep.WRITTEN;
            if (first) {
                told(back, owner, failureClass, true);
            }
            try {
                parked = ledger.write(back);
            } catch (LedgerConflict lost) {
                LOG.debugf("Job %s changed while its dead-letter copy was adopted; the next sweep decides again", jobId);
                return false;
            }
        } else {
            first = quarantine.putIfAbsent(QuarantineRecord.of(parked, preflight.check(m).diagnostics(), m.messageId(), now,
                    config.retention().quarantine(), List.of(), copy,
                    io.poisonguard.quarantine.Triage.owned(owner.owner(), owner.defaulted())).withReceiveCount(m.receiveCount()));
            if (first) {
                told(parked, owner, failureClass, false);
                if (originalStays) {
                    LOG.warnf("Job %s adopted from the dead-letter queue, its labelled copy refused (%s): the original stays there as it"
                            + " came", jobId, copy.detail());
                } else {
                    LOG.infof("Job %s adopted from the dead-letter queue: class=%s receives=%d generation=%d", jobId, failureClass,
                            m.receiveCount(), parked.generation());
                }
            }
            // A job parked before this sweep read it may have moved since (a replay that, finding nothing, concludes it
            // UNRECOVERABLE; a resolve): its original is deleted only while the ledger still says what it was decided on.
            if (wasParked && !ledger.stillAt(key, parked.version())) {
                LOG.debugf("Job %s changed while its dead-letter original was kept; the next sweep decides again", jobId);
                return false;
            }
        }
        if (originalStays) {
            // Not replaced: the original is given back with what the sweep keeps, at once, for a replay's scan to find.
            return false;
        }
        try {
            inbox.delete(m);
        } catch (RuntimeException e) {
            // The record is written, so this adoption stands and is told below; the original shows again and the next sweep,
            // finding the job parked, marks it as one of its copies (one more labelled copy in the DLQ, no second alert).
            LOG.warnf("Job %s: deleting its adopted dead-letter original failed (%s); the next sweep finishes it", jobId,
                    e.getClass().getSimpleName());
        }
        if (first && reopening) {
            LOG.infof("Job %s: its dead-letter original was replaced by a labelled copy (quarantined again)", jobId);
        } else if (!first) {
            LOG.infof("Job %s: a dead-letter copy without quarantine attributes was marked as one of its copies (already quarantined)", jobId);
        }
        return first;
    }

    /** Counts and alerts an adoption (or a reopen) whose record this sweep wrote: the one alert of that quarantine. */
    private void told(LedgerRecord parked, io.poisonguard.owners.OwnerMap.Assignment owner, FailureClass failureClass, boolean reopened) {
        metrics.quarantined(failureClass);
        metrics.adoptedFromDeadLetters();
        alerts.quarantined(parked, owner);
        if (reopened) {
            LOG.warnf("Job %s: a copy of its payload, concluded gone, was found in the dead-letter queue; quarantined again and"
                    + " can be replayed", parked.jobId());
        }
    }

    /**
     * Sends a copy the backstop moved back to the main queue as it came, then deletes it here. A failed send leaves it for
     * the next sweep; a failed delete after the send leaves one more copy of the job on the main queue, which the ledger
     * takes for the duplicate it is.
     */
    private void giveBack(InboundMessage m, String jobId, String returns, String why) {
        // The job id goes as an attribute (an identity taken from the MessageId would not survive the new message), and the
        // count of returns, which bounds them; then the original's, as many as SQS's 10 leave room for.
        Map<String, MessageAttribute> first = new LinkedHashMap<>();
        first.put(WireAttributes.JOB_ID, MessageAttribute.string(jobId));
        first.put(WireAttributes.DEAD_LETTER_RETURNS, MessageAttribute.string(returns));
        Map<String, MessageAttribute> attributes = WireAttributes.fitted(first, m.attributes());
        List<String> dropped = m.attributes().keySet().stream().filter(k -> !attributes.containsKey(k)).sorted().toList();
        if (!dropped.isEmpty()) {
            LOG.warnf("Job %s: its copy sent back to the main queue leaves out attributes %s (SQS allows %d)", jobId, dropped,
                    WireAttributes.SQS_MAX);
        }
        try {
            inbox.returnToSource(m.body(), attributes);
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: giving its dead-letter copy back to the main queue failed (%s); the next sweep tries again", jobId,
                    e.getClass().getSimpleName());
            return;
        }
        metrics.returnedFromDeadLetters();
        LOG.warnf("Job %s given back to the main queue from the dead-letter queue, not quarantined: %s", jobId, why);
        try {
            inbox.delete(m);
        } catch (RuntimeException e) {
            LOG.warnf("Job %s: deleting its dead-letter copy after giving it back failed (%s); the next sweep gives it back again",
                    jobId, e.getClass().getSimpleName());
        }
    }

    private static int parseGeneration(String s) {
        try {
            return Math.max(1, Integer.parseInt(s));
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}

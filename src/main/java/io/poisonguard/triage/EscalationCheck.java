package io.poisonguard.triage;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.poisonguard.alerts.Alerts;
import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.observability.Metrics;
import io.poisonguard.owners.Owner;
import io.poisonguard.owners.OwnerMap;
import io.poisonguard.owners.ReviewStage;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.replay.CodeVersion;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The review cadence, enforced: every {@code ownership.check-interval} the records still waiting are compared with
 * their owner's deadlines, and each stage past its deadline (acknowledge, resolve) is escalated once, to the owner's
 * escalation route, with an audit entry and a counter. Once means once across instances: the record remembers the
 * stages escalated, set by a conditional write that only one instance wins. The overdue gauges are what the
 * Prometheus rule watches.
 */
@ApplicationScoped
@io.quarkus.runtime.Startup
public class EscalationCheck {
    private static final Logger LOG = Logger.getLogger(EscalationCheck.class);
    /** Records looked at per failure class and check. */
    public static final int PER_CLASS = 500;
    /** Fully escalated records counted per class for the overdue gauges. */
    static final int MAX_COUNTED = 10_000;

    private final QuarantineStore quarantine;
    private final OwnerMap owners;
    private final Alerts alerts;
    private final Metrics metrics;
    private final AuditLog audit;
    private final Clock clock;
    private final CodeVersion codeVersion;
    private final MeterRegistry registry;
    private final Map<String, AtomicInteger> overdue = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong passes = new java.util.concurrent.atomic.AtomicLong();

    public EscalationCheck(QuarantineStore quarantine, OwnerMap owners, Alerts alerts, Metrics metrics, AuditLog audit, Clock clock,
                           CodeVersion codeVersion, MeterRegistry registry) {
        this.quarantine = quarantine;
        this.owners = owners;
        this.alerts = alerts;
        this.metrics = metrics;
        this.audit = audit;
        this.clock = clock;
        this.codeVersion = codeVersion;
        this.registry = registry;
        // Every owner's counters and gauges exist from the start, at zero, so rules see the first escalation.
        for (Owner o : owners.all()) {
            for (ReviewStage stage : ReviewStage.values()) {
                metrics.escalationCounter(o.name(), stage.key());
                overdue.computeIfAbsent(o.name() + "/" + stage.key(), this::gauge);
            }
        }
    }

    @Scheduled(every = "{poison-guard.ownership.check-interval}", delayed = "{poison-guard.ownership.check-interval}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        try {
            check();
        } catch (RuntimeException e) {
            if (e.getCause() instanceof software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException) {
                // At boot with resources.create, the first check may run before the quarantine table exists.
                LOG.debugf("Escalation check: the quarantine table is not there yet");
                return;
            }
            LOG.warnf("Escalation check failed (%s); the next one tries again", e.getClass().getSimpleName());
        }
    }

    /** One pass; returns how many stages it escalated. */
    public int check() {
        Instant now = clock.instant();
        Map<String, Integer> counts = new java.util.HashMap<>();
        int escalated = 0;
        // Per group of owners sharing a deadline, each read past its own.
        List<QuarantineStore.Due> acknowledgeDue = due(owners.byDeadline(Owner::acknowledgeWithin), now);
        List<QuarantineStore.Due> resolveDue = due(owners.byDeadline(Owner::resolveWithin), now);
        for (FailureClass c : FailureClass.values()) {
            // The records with every stage escalated are still overdue: the gauges count them, without reading them whole
            // (read before this pass escalates more, so none is counted twice).
            for (QuarantineStore.Escalated e : quarantine.fullyEscalated(c, now, MAX_COUNTED)) {
                String owner = owners.owner(e.owner()).name();
                counts.merge(owner + "/" + ReviewStage.RESOLVE.key(), 1, Integer::sum);
                if (!e.acknowledged()) {
                    counts.merge(owner + "/" + ReviewStage.ACKNOWLEDGE.key(), 1, Integer::sum);
                }
            }
            // Escalated for acknowledgement only: still overdue for it, counted here whether or not read below (they are
            // read only once some owner's resolve deadline may have passed).
            for (QuarantineStore.Escalated e : quarantine.partlyEscalated(c, now, MAX_COUNTED)) {
                if (!e.acknowledged()) {
                    counts.merge(owners.owner(e.owner()).name() + "/" + ReviewStage.ACKNOWLEDGE.key(), 1, Integer::sum);
                }
            }
            // Only records with a stage that may be due: however many have nothing due now (fully escalated, or escalated
            // for acknowledgement with their resolve deadline far off), newer ones get their turn.
            List<QuarantineRecord> waiting = quarantine.waitingSince(c, acknowledgeDue, resolveDue, now, PER_CLASS);
            for (QuarantineRecord r : waiting) {
                Owner owner = owners.owner(r.triage().owner());
                boolean acknowledged = r.triage().acknowledgedBy() != null;
                boolean countedAbove = r.triage().escalated().contains(ReviewStage.ACKNOWLEDGE.key());
                if (!acknowledged && !countedAbove && now.isAfter(r.quarantinedAt().plus(owner.acknowledgeWithin()))) {
                    counts.merge(owner.name() + "/" + ReviewStage.ACKNOWLEDGE.key(), 1, Integer::sum);
                }
                if (now.isAfter(r.quarantinedAt().plus(owner.resolveWithin()))) {
                    counts.merge(owner.name() + "/" + ReviewStage.RESOLVE.key(), 1, Integer::sum);
                }
                for (ReviewStage stage : ReviewStage.overdue(owner, r.quarantinedAt(), acknowledged, false, r.triage().escalated(), now)) {
                    try {
                        if (escalate(r, owner, stage, now)) {
                            escalated++;
                        }
                    } catch (io.poisonguard.ledger.StoreUnavailable down) {
                        throw down;
                    } catch (RuntimeException e) {
                        // One record the store will not update (say, grown past DynamoDB's item limit) must not keep every
                        // record after it, of every tenant and class, from its escalation, nor freeze the overdue gauges.
                        LOG.warnf("Job %s: escalating its %s stage failed (%s); the other records go on (a stage not yet marked"
                                + " escalated is tried again next check)", r.jobId(), stage.key(), e.getClass().getSimpleName());
                    }
                }
            }
        }
        overdue.forEach((k, v) -> v.set(counts.getOrDefault(k, 0)));
        counts.forEach((k, v) -> overdue.computeIfAbsent(k, this::gauge).set(v));
        passes.incrementAndGet();
        return escalated;
    }

    private static List<QuarantineStore.Due> due(List<OwnerMap.DeadlineGroup> groups, Instant now) {
        return groups.stream().map(g -> new QuarantineStore.Due(now.minus(g.within()), g.owners(), g.allBut())).toList();
    }

    /** Escalates one stage of one record, once across instances; false when another instance had already done it. */
    private boolean escalate(QuarantineRecord r, Owner owner, ReviewStage stage, Instant now) {
        JobKey key = JobKey.of(r.tenant(), r.jobId());
        if (!quarantine.markEscalated(key, stage.key())) {
            return false;
        }
        java.time.Duration within = stage == ReviewStage.ACKNOWLEDGE ? owner.acknowledgeWithin() : owner.resolveWithin();
        alerts.escalated(r, owner.name(), stage.key(), within);
        metrics.escalated(owner.name(), stage.key());
        audit.append(new AuditEntry(r.jobId(), r.tenant(), now, "poison-guard", AuditAction.ESCALATE, "", codeVersion.value(),
                r.generation(), r.attempts(), "ESCALATED_" + stage.name(), "owner " + owner.name() + ", not done within " + within));
        LOG.infof("Job %s escalated to %s: not %s within %s", r.jobId(), owner.name(),
                stage == ReviewStage.ACKNOWLEDGE ? "acknowledged" : "resolved", within);
        return true;
    }

    /** Completed checks since boot. */
    public long passes() {
        return passes.get();
    }

    private AtomicInteger gauge(String ownerAndStage) {
        AtomicInteger value = new AtomicInteger();
        String[] parts = ownerAndStage.split("/", 2);
        Gauge.builder("poison.guard.quarantine.overdue", value, AtomicInteger::get)
                .description("Quarantine records past their owner's deadline, by owner and review stage")
                .tag("owner", parts[0]).tag("stage", parts[1]).register(registry);
        return value;
    }
}

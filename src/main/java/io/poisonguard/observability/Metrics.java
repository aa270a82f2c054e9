package io.poisonguard.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.poisonguard.failure.FailureClass;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every meter the service exports. Tags carry classes, outcomes and reasons, never job ids or
 * payload data (unbounded cardinality and privacy).
 */
@Singleton
public class Metrics {
    /** Outcome tag values of {@code poison_guard_outcomes_total}. */
    public enum Outcome {
        SUCCEEDED, RETRY_SCHEDULED, QUARANTINED, DUPLICATE_DROPPED,
        /** Poison of a disposable job type, dropped instead of quarantined. */
        DROPPED_DISPOSABLE, DEFERRED_ACTIVE_ELSEWHERE, LEFT_TO_REDELIVER,
        /** Failed while the systemic guard was tripped: not charged to the job. */
        HELD,
        /** Given back unfinished at shutdown: not charged to the job. */
        ABANDONED,
        /** Gave its copy back after waiting too long for the isolation lane. */
        LANE_BUSY,
        /** A prefetched copy that found no free slot within half its visibility timeout: given back, not started. */
        PREFETCH_RETURNED,
        /** A received copy whose turn came while consumption was paused (a breaker open, the ledger down): given back, not started. */
        PAUSED_RETURNED,
        /** Gave its copy back because the ledger did not answer: not charged to the job. */
        LEDGER_UNAVAILABLE,
        /** A copy that arrived before its job's retry delay ran out: hidden until then. */
        DEFERRED_RETRY_DELAY
    }

    private static final String RETURNED = "poison.guard.dead.letter.returned";
    private static final String RETURNED_HELP = "Jobs SQS's redrive backstop moved to the DLQ while their ledger still tracked them,"
            + " given back to the main queue";
    private final MeterRegistry registry;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger paused = new AtomicInteger();
    private final AtomicInteger systemic = new AtomicInteger();
    private final AtomicInteger stuck = new AtomicInteger();
    private final AtomicInteger ledgerDown = new AtomicInteger();
    private final AtomicInteger reserve = new AtomicInteger();
    private final DistributionSummary queueAge;
    private final Counter received;
    private final RejectionHistory rejections = new RejectionHistory();
    /**
     * The per-message meters, by their tags, looked up once: building a meter's id and finding it in the
     * registry on every message costs more than the count itself. Both tag sets are bounded (outcomes and
     * failure classes are enums; job types are the configured handlers', results a handful).
     */
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final Map<String, Timer> handlerTimers = new ConcurrentHashMap<>();

    public Metrics(MeterRegistry registry) {
        this.registry = registry;
        this.queueAge = DistributionSummary.builder("poison.guard.queue.age")
                .description("Seconds between a message's SentTimestamp and its receive")
                .baseUnit("seconds")
                .publishPercentiles(0.5, 0.99)
                .register(registry);
        this.received = Counter.builder("poison.guard.received").description("Messages received from the main queue").register(registry);
        registry.gauge("poison.guard.in.flight", inFlight);
        registry.gauge("poison.guard.consumption.paused", paused);
        registry.gauge("poison.guard.systemic.tripped", systemic);
        registry.gauge("poison.guard.stuck.handlers", stuck);
        registry.gauge("poison.guard.ledger.unavailable", ledgerDown);
        Gauge.builder("poison.guard.prefetch.reserve", reserve, AtomicInteger::get)
                .description("Messages the poller holds ahead of its working slots now (consumer.prefetch, or sized by job time)")
                .register(registry);
        Counter.builder("poison.guard.dead.letter.adopted")
                .description("Jobs found in the DLQ without a quarantine record and adopted as REDRIVEN").register(registry);
        Counter.builder(RETURNED).description(RETURNED_HELP).register(registry);
        for (FailureClass c : FailureClass.values()) {
            // Registered up front so alert rules see a zero, not an absent series.
            Counter.builder("poison.guard.quarantined").description("Jobs quarantined, by failure class")
                    .tag("failure_class", c.name()).register(registry);
        }
    }

    public void received(Duration age) {
        received.increment();
        queueAge.record(Math.max(0, age.toMillis()) / 1000.0);
    }

    public void outcome(Outcome outcome, FailureClass failureClass) {
        String failure = failureClass == null ? "none" : failureClass.name();
        outcomes.computeIfAbsent(outcome.name() + '/' + failure, k -> Counter.builder("poison.guard.outcomes")
                .description("How received messages ended, by outcome and failure class")
                .tag("outcome", outcome.name().toLowerCase())
                .tag("failure_class", failure)
                .register(registry)).increment();
    }

    public void quarantined(FailureClass failureClass) {
        Counter.builder("poison.guard.quarantined").description("Jobs quarantined, by failure class")
                .tag("failure_class", failureClass.name()).register(registry).increment();
    }

    /** Poison of a disposable job type was dropped, not quarantined. */
    public void dropped(FailureClass failureClass, String jobType) {
        droppedCounter(failureClass, jobType).increment();
    }

    /** Registers the drop counter at zero (so a rule's increase() sees the first drop). */
    public Counter droppedCounter(FailureClass failureClass, String jobType) {
        return Counter.builder("poison.guard.dropped").description("Poison of disposable job types dropped instead of quarantined, by class and type")
                .tag("failure_class", failureClass.name()).tag("job_type", jobType == null ? "unknown" : jobType).register(registry);
    }

    /** An overdue quarantine record was escalated to its owner (once per stage). */
    public void escalated(String owner, String stage) {
        escalationCounter(owner, stage).increment();
    }

    /** Registers the escalation counter at zero. */
    public Counter escalationCounter(String owner, String stage) {
        return Counter.builder("poison.guard.escalations").description("Overdue quarantine records escalated to their owner, by owner and review stage")
                .tag("owner", owner).tag("stage", stage).register(registry);
    }

    /** The dead-letter intake gave a job the redrive backstop moved, and its ledger still tracks, back to the main queue. */
    public void returnedFromDeadLetters() {
        Counter.builder(RETURNED).description(RETURNED_HELP).register(registry).increment();
    }

    /** The dead-letter intake adopted a job it found in the DLQ without a quarantine record. */
    public void adoptedFromDeadLetters() {
        Counter.builder("poison.guard.dead.letter.adopted")
                .description("Jobs found in the DLQ without a quarantine record and adopted as REDRIVEN").register(registry).increment();
    }

    public void admissionRejected(String reason) {
        Counter.builder("poison.guard.admission.rejections").description("Pre-flight rejections, by reason")
                .tag("reason", reason).register(registry).increment();
        rejections.record(reason, java.time.Instant.now());
    }

    /** Admission rejections per minute and reason, the last hour, on this instance (the console's chart). */
    public RejectionHistory rejections() {
        return rejections;
    }

    public void handled(String jobType, String result, Duration took) {
        handlerTimers.computeIfAbsent(jobType + '/' + result, k -> Timer.builder("poison.guard.handler")
                .description("Handler run time, by job type and result")
                .tag("job_type", jobType).tag("result", result).register(registry)).record(took);
    }

    /** A crash found on receive: attributable (the job ran alone) or ambiguous (it had company). */
    public void crash(boolean attributable) {
        Counter.builder("poison.guard.crashes").description("Attempts that started and never finished, by attribution")
                .tag("attribution", attributable ? "attributable" : "ambiguous").register(registry).increment();
    }

    /** 1 while a circuit breaker holds consumption paused. */
    public void paused(boolean isPaused) {
        paused.set(isPaused ? 1 : 0);
    }

    /** 1 while the systemic-failure guard holds consumption. */
    public void systemicTripped(boolean tripped) {
        systemic.set(tripped ? 1 : 0);
    }

    /** 1 while the ledger does not answer and consumption is paused for it. */
    /** The reserve the poller holds ahead of its working slots now. */
    public void reserve(int messages) {
        reserve.set(messages);
    }

    public void ledgerUnavailable(boolean down) {
        ledgerDown.set(down ? 1 : 0);
    }

    /** Handler threads that did not stop after their deadline's interrupt. */
    public AtomicInteger stuckHandlers() {
        return stuck;
    }

    public AtomicInteger inFlight() {
        return inFlight;
    }
}

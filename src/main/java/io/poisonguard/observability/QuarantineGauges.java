package io.poisonguard.observability;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.QuarantineStore;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Quarantine that nobody looks at is lost requests with extra steps (seed 000): these gauges show
 * how many jobs wait in quarantine and how old the oldest is, per failure class, plus the depth of
 * the main and dead-letter queues. Refreshed on a schedule, not per scrape, so Prometheus never
 * drives DynamoDB reads.
 */
@ApplicationScoped
public class QuarantineGauges {
    private static final Logger LOG = Logger.getLogger(QuarantineGauges.class);
    /** Counted per class per refresh, at most; a larger backlog reports this number. */
    static final int MAX_COUNTED = 10_000;

    private final QuarantineStore quarantine;
    private final QueueDepthSource depths;
    private final Clock clock;
    private final Map<FailureClass, AtomicLong> counts = new EnumMap<>(FailureClass.class);
    private final Map<FailureClass, AtomicLong> oldest = new EnumMap<>(FailureClass.class);
    private final Map<String, AtomicLong> queueDepth = new ConcurrentHashMap<>();
    private volatile boolean started;

    public QuarantineGauges(QuarantineStore quarantine, QueueDepthSource depths, Clock clock, MeterRegistry registry) {
        this.quarantine = quarantine;
        this.depths = depths;
        this.clock = clock;
        for (FailureClass c : FailureClass.values()) {
            counts.put(c, new AtomicLong());
            oldest.put(c, new AtomicLong());
            Gauge.builder("poison.guard.quarantine.records", counts.get(c), AtomicLong::get)
                    .description("Jobs waiting in quarantine, by failure class").tag("failure_class", c.name()).register(registry);
            Gauge.builder("poison.guard.quarantine.oldest.age", oldest.get(c), AtomicLong::get).baseUnit("seconds")
                    .description("Age of the oldest job waiting in quarantine, by failure class").tag("failure_class", c.name()).register(registry);
        }
        for (String q : List.of("jobs", "dlq")) {
            queueDepth.put(q, new AtomicLong());
            Gauge.builder("poison.guard.queue.depth", queueDepth.get(q), AtomicLong::get)
                    .description("Approximate messages on the queue (visible, in flight, delayed)").tag("queue", q).register(registry);
        }
    }

    /** Called once the queues and tables exist (after the boot-time bootstrap), so no refresh reads missing ones. */
    public void start() {
        started = true;
    }

    @Scheduled(every = "{poison-guard.monitoring.refresh}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void refresh() {
        if (!started) {
            return;
        }
        try {
            Instant now = clock.instant();
            for (FailureClass c : FailureClass.values()) {
                QuarantineStore.Waiting waiting = quarantine.waiting(c, now, MAX_COUNTED);
                counts.get(c).set(waiting.count());
                oldest.get(c).set(waiting.oldest().map(t -> Math.max(0, Duration.between(t, now).toSeconds())).orElse(0L));
            }
            depths.read().forEach((q, n) -> queueDepth.get(q).set(n));
        } catch (RuntimeException e) {
            LOG.warnf("Refreshing quarantine gauges failed (%s); keeping the last values", e.getClass().getSimpleName());
        }
    }
}

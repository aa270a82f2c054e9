package io.poisonguard.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.failure.Scrubber;
import io.poisonguard.ledger.LedgerRecord;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * Sends alerts through every configured notifier: the structured log always, a webhook and SNS
 * when configured. Delivery runs off the job's thread, bounded per notifier ({@link AlertDispatch}), and
 * never fails the job: a notifier that fails is logged, one that falls behind has alerts dropped and
 * counted (a quarantine is durable whether or not anyone was told).
 */
@ApplicationScoped
public class Alerts {
    private static final Logger LOG = Logger.getLogger(Alerts.class);

    /** Sends to one notifier at once, and alerts waiting per notifier, before new ones are dropped and counted. */
    static final int WORKERS = 2;
    static final int CAPACITY = 1_000;

    private final List<Notifier> notifiers = new ArrayList<>();
    private final List<AlertDispatch> dispatches = new ArrayList<>();
    private final String operatorUrl;
    private final Clock clock;

    public Alerts(PoisonGuardConfig config, ObjectMapper json, Clock clock, MeterRegistry registry) {
        this.clock = clock;
        this.operatorUrl = config.alerts().operatorUrl().replaceAll("/+$", "");
        notifiers.add(new LogNotifier(json));
        PoisonGuardConfig.Alerts.Webhook webhook = config.alerts().webhook();
        webhook.url().ifPresent(u -> notifiers.add(new WebhookNotifier(u, webhook.timeout(), json)));
        PoisonGuardConfig.Alerts.Sns sns = config.alerts().sns();
        sns.topicArn().ifPresent(arn -> notifiers.add(new SnsNotifier(arn, sns.region(), sns.endpointOverride(), json)));
        for (Notifier n : notifiers) {
            Counter dropped = Counter.builder("poison.guard.alerts.dropped").description("Alerts dropped because their notifier's queue was full")
                    .tag("notifier", n.name()).register(registry);
            dispatches.add(new AlertDispatch(n, WORKERS, CAPACITY, name -> dropped.increment()));
        }
    }

    public List<String> notifiers() {
        return notifiers.stream().map(Notifier::name).toList();
    }

    /** A job was quarantined (once per quarantine). */
    public void quarantined(LedgerRecord r) {
        publish(new Alert(Alert.QUARANTINED, r.jobId(), r.tenant(), r.jobType(), r.quarantineClass().name(), r.attempt(), r.generation(),
                r.quarantineReason(), link(r.jobId()), clock.instant()));
    }

    /** A replayed generation ended: succeeded, or quarantined again. */
    public void replayOutcome(LedgerRecord r) {
        publish(new Alert(Alert.REPLAY_OUTCOME, r.jobId(), r.tenant(), r.jobType(),
                r.quarantineClass() == null ? null : r.quarantineClass().name(), r.attempt(), r.generation(),
                r.quarantineClass() == null ? "replay succeeded" : r.quarantineReason(), link(r.jobId()), clock.instant()));
    }

    /** The systemic-failure guard tripped: one alert, naming the signature and a sample of job ids. */
    public void systemicTripped(io.poisonguard.systemic.SystemicWatch.Trip t) {
        String sample = t.sampleJobIds().stream().map(id -> Scrubber.scrub(id, 64)).collect(java.util.stream.Collectors.joining(", "));
        String reason = t.cause() + (t.signature() == null ? "" : ": " + t.signature().describe()) + "; sample jobs: " + sample;
        publish(new Alert(Alert.SYSTEMIC_TRIPPED, null, null, null, t.signature() == null ? null : t.signature().failureClass().name(),
                0, 0, reason, operatorUrl + "/ops/consumption", clock.instant()));
    }

    /** The systemic-failure guard cleared. */
    public void systemicResumed(String why) {
        publish(new Alert(Alert.SYSTEMIC_RESUMED, null, null, null, null, 0, 0, why, operatorUrl + "/ops/consumption", clock.instant()));
    }

    private String link(String jobId) {
        return operatorUrl + "/ops/quarantine/" + java.net.URLEncoder.encode(jobId, java.nio.charset.StandardCharsets.UTF_8);
    }

    private void publish(Alert alert) {
        dispatches.forEach(d -> d.offer(alert));
    }

    @PreDestroy
    void close() {
        dispatches.forEach(AlertDispatch::close);
        notifiers.stream().filter(n -> n instanceof AutoCloseable).forEach(n -> {
            try {
                ((AutoCloseable) n).close();
            } catch (Exception e) {
                LOG.debugf("closing %s: %s", n.name(), e.getMessage());
            }
        });
    }
}

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
import java.util.Optional;

/**
 * Sends alerts through every configured notifier: the structured log always, a webhook and SNS
 * when configured. Delivery runs off the job's thread, bounded per notifier ({@link AlertDispatch}), and
 * never fails the job: a notifier that fails is logged, one that falls behind has alerts dropped and
 * counted (a quarantine is durable whether or not anyone was told).
 */
@ApplicationScoped
public class Alerts {
    private static final Logger LOG = Logger.getLogger(Alerts.class);
    /** The most the alerts still queued at shutdown are given to be delivered. */
    public static final java.time.Duration DELIVERY_AT_SHUTDOWN = AlertDispatch.DRAIN;

    /** Sends to one notifier at once, and alerts waiting per notifier, before new ones are dropped and counted. */
    static final int WORKERS = 2;
    static final int CAPACITY = 1_000;

    private final List<Notifier> notifiers = new ArrayList<>();
    private final List<AlertDispatch> dispatches = new ArrayList<>();
    private final String operatorUrl;
    private final Clock clock;
    private final io.poisonguard.owners.OwnerMap owners;
    /** Each owner's own alert route (its webhook and SNS topic), besides the service-wide ones. */
    private final java.util.Map<String, List<AlertDispatch>> ownerRoutes = new java.util.HashMap<>();
    /** Each owner's escalation route. */
    private final java.util.Map<String, List<AlertDispatch>> escalationRoutes = new java.util.HashMap<>();

    public Alerts(PoisonGuardConfig config, ObjectMapper json, Clock clock, MeterRegistry registry, io.poisonguard.owners.OwnerMap owners) {
        this.clock = clock;
        this.owners = owners;
        this.operatorUrl = config.alerts().operatorUrl().replaceAll("/+$", "");
        notifiers.add(new LogNotifier(json));
        PoisonGuardConfig.Alerts.Webhook webhook = config.alerts().webhook();
        webhook.url().ifPresent(u -> notifiers.add(new WebhookNotifier(u, webhook.timeout(), json)));
        PoisonGuardConfig.Alerts.Sns sns = config.alerts().sns();
        sns.topicArn().ifPresent(arn -> notifiers.add(new SnsNotifier(arn, sns.region(), sns.endpointOverride(), sns.timeout(), json)));
        for (Notifier n : notifiers) {
            Counter dropped = Counter.builder("poison.guard.alerts.dropped").description("Alerts dropped because their notifier's queue was full")
                    .tag("notifier", n.name()).register(registry);
            dispatches.add(new AlertDispatch(n, WORKERS, CAPACITY, name -> dropped.increment()));
        }
        config.ownership().owners().forEach((team, t) -> {
            List<AlertDispatch> routes = new ArrayList<>();
            t.webhook().ifPresent(u -> routes.add(dispatch(new WebhookNotifier(u, webhook.timeout(), json), "owner-" + team, registry)));
            t.snsTopicArn().ifPresent(arn -> routes.add(dispatch(new SnsNotifier(arn, sns.region(), sns.endpointOverride(), sns.timeout(), json),
                    "owner-" + team + "-sns", registry)));
            ownerRoutes.put(team, routes);
            Optional<java.net.URI> escalation = t.escalationWebhook().or(t::webhook);
            escalationRoutes.put(team, escalation.map(u -> List.of(dispatch(new WebhookNotifier(u, webhook.timeout(), json),
                    "escalation-" + team, registry))).orElse(List.of()));
        });
    }

    private AlertDispatch dispatch(Notifier n, String name, MeterRegistry registry) {
        Counter dropped = Counter.builder("poison.guard.alerts.dropped").description("Alerts dropped because their notifier's queue was full")
                .tag("notifier", name).register(registry);
        return new AlertDispatch(n, WORKERS, CAPACITY, x -> dropped.increment());
    }

    public List<String> notifiers() {
        return notifiers.stream().map(Notifier::name).toList();
    }

    /** A job was quarantined (once per quarantine): to every service-wide route and to its owner's. */
    public void quarantined(LedgerRecord r, io.poisonguard.owners.OwnerMap.Assignment owner) {
        Alert alert = new Alert(Alert.QUARANTINED, r.jobId(), r.tenant(), r.jobType(), r.quarantineClass().name(), r.attempt(), r.generation(),
                r.quarantineReason(), link(r.jobId(), r.tenant()), clock.instant(), owner.owner() + (owner.defaulted() ? " (default: no owner matched)" : ""));
        publish(alert);
        ownerRoutes.getOrDefault(owner.owner(), List.of()).forEach(d -> d.offer(alert));
    }

    /** A record passed its owner's deadline for {@code stage} (acknowledge or resolve): to the log and the owner's escalation route. */
    public void escalated(io.poisonguard.quarantine.QuarantineRecord r, String owner, String stage, java.time.Duration within) {
        Alert alert = new Alert(Alert.ESCALATED, r.jobId(), r.tenant(), r.jobType(), r.failureClass().name(), r.attempts(), r.generation(),
                "not " + (stage.equals("acknowledge") ? "acknowledged" : "resolved") + " within " + within + " of quarantine (owner " + owner
                        + "); state " + r.triageState(), link(r.jobId(), r.tenant()), clock.instant(), owner);
        dispatches.get(0).offer(alert);
        List<AlertDispatch> routes = escalationRoutes.getOrDefault(owner, List.of());
        if (routes.isEmpty()) {
            // No route of its own (the default owner, or a team without a webhook): the service-wide routes carry it.
            dispatches.stream().skip(1).forEach(d -> d.offer(alert));
        }
        routes.forEach(d -> d.offer(alert));
    }

    /** A replayed generation ended: succeeded, or quarantined again. To every service-wide route and to the job's owner's. */
    public void replayOutcome(LedgerRecord r) {
        io.poisonguard.owners.OwnerMap.Assignment owner = owners.assign(r.tenant(), r.jobType());
        Alert alert = new Alert(Alert.REPLAY_OUTCOME, r.jobId(), r.tenant(), r.jobType(),
                r.quarantineClass() == null ? null : r.quarantineClass().name(), r.attempt(), r.generation(),
                r.quarantineClass() == null ? "replay succeeded" : r.quarantineReason(), link(r.jobId(), r.tenant()), clock.instant(),
                owner.owner() + (owner.defaulted() ? " (default: no owner matched)" : ""));
        publish(alert);
        ownerRoutes.getOrDefault(owner.owner(), List.of()).forEach(d -> d.offer(alert));
    }

    /** The systemic-failure guard tripped: one alert, naming the signature and a sample of job ids. */
    public void systemicTripped(io.poisonguard.systemic.SystemicWatch.Trip t) {
        String sample = t.sampleJobIds().stream().map(id -> Scrubber.scrub(id, 64)).collect(java.util.stream.Collectors.joining(", "));
        String reason = t.cause() + (t.signature() == null ? "" : ": " + t.signature().describe())
                + (t.jobTypes().isEmpty() ? "" : "; job types: " + String.join(", ", t.jobTypes())) + "; sample jobs: " + sample;
        publish(new Alert(Alert.SYSTEMIC_TRIPPED, null, null, null, t.signature() == null ? null : t.signature().failureClass().name(),
                0, 0, reason, operatorUrl + "/ops/consumption", clock.instant()));
    }

    /** The systemic-failure guard cleared. */
    public void systemicResumed(String why) {
        publish(new Alert(Alert.SYSTEMIC_RESUMED, null, null, null, null, 0, 0, why, operatorUrl + "/ops/consumption", clock.instant()));
    }

    /**
     * The job's record in the operator API, naming its tenant ({@code -} for the job of no tenant): a job id two tenants
     * share answers 409 without it. Encoded for a path segment and a query value (a space as {@code %20}, not {@code +}).
     */
    private String link(String jobId, String tenant) {
        return operatorUrl + "/ops/quarantine/" + encoded(jobId) + "?tenant=" + (tenant == null ? "-" : encoded(tenant));
    }

    private static String encoded(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }

    private void publish(Alert alert) {
        dispatches.forEach(d -> d.offer(alert));
    }

    /**
     * At shutdown (after the poller stopped, so the last jobs' alerts are queued): every route delivers what it holds, all
     * at once, within one {@link AlertDispatch#DRAIN}; what is left then is counted as dropped. Each notifier is closed
     * after its last send.
     */
    @PreDestroy
    void close() {
        List<AlertDispatch> all = new ArrayList<>(dispatches);
        ownerRoutes.values().forEach(all::addAll);
        escalationRoutes.values().forEach(all::addAll);
        all.forEach(AlertDispatch::shutdown);
        java.time.Instant deadline = java.time.Instant.now().plus(AlertDispatch.DRAIN);
        all.forEach(d -> d.close(deadline));
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.alerts.Alerts;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.observability.Metrics;
import io.poisonguard.systemic.Signature;
import io.poisonguard.systemic.SystemicWatch;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * This worker's systemic-failure guard: a {@link SystemicWatch} fed by attempt outcomes, which
 * alerts once when it trips and once when consumption resumes. Disabled by configuration, it charges
 * every failure as usual.
 */
@Singleton
public class SystemicGuard implements io.poisonguard.replay.ConsumptionState {
    private static final Logger LOG = Logger.getLogger(SystemicGuard.class);

    private final SystemicWatch watch;
    private final boolean enabled;
    private final Duration holdDelay;
    private final Clock clock;
    private final Alerts alerts;
    private final Metrics metrics;
    private final FleetGuards fleet;

    public SystemicGuard(PoisonGuardConfig config, Clock clock, Alerts alerts, Metrics metrics, FleetGuards fleet) {
        this.fleet = fleet;
        PoisonGuardConfig.Systemic s = config.systemic();
        this.enabled = s.enabled();
        this.watch = new SystemicWatch(Math.max(2, s.sameSignature()), Math.max(1, s.maxQuarantines()), s.quarantineWindow(),
                s.probeInterval());
        this.holdDelay = s.probeInterval();
        this.clock = clock;
        this.alerts = alerts;
        this.metrics = metrics;
    }

    /** How long a held copy stays hidden: until about the next probe. */
    public Duration holdDelay() {
        return holdDelay;
    }

    /** Whether the failure of {@code jobId}, a job of type {@code jobType}, must be held rather than charged. */
    public synchronized boolean holdFailure(Signature signature, String jobType, String jobId) {
        return enabled && rule(watch.failed(signature, jobType, jobId, clock.instant()));
    }

    /** Whether a quarantine of {@code jobId} after a failed attempt must be held (the quarantine rate tripped). */
    public synchronized boolean holdQuarantine(String jobId) {
        return enabled && rule(watch.quarantining(jobId, clock.instant()));
    }

    /** A quarantine decided at intake (admission, crash limit): counted toward the rate, never held. */
    public synchronized void quarantinedAtIntake(String jobId) {
        if (enabled) {
            rule(watch.quarantining(jobId, clock.instant()));
        }
    }

    /** An attempt of a job of type {@code jobType} succeeded. */
    public synchronized void succeeded(String jobType) {
        if (enabled && watch.succeeded(jobType, clock.instant())) {
            resumed("a probe job succeeded");
        }
    }

    /**
     * An operator resumes consumption; returns the trip it cleared, read in the same step (a trip that starts while the
     * request is on its way is the one cleared, and the one named).
     */
    public synchronized Optional<SystemicWatch.Trip> resume(String actor) {
        Optional<SystemicWatch.Trip> cleared = watch.trip();
        if (watch.resume()) {
            resumed("resumed by " + actor);
        }
        return cleared;
    }

    /**
     * An operator's resume that {@code actor} sent to another worker, written at {@code at}: clears this worker's guard if
     * it tripped before then. Returns whether it did.
     */
    public synchronized boolean resumedElsewhere(Instant at, String actor) {
        if (enabled && watch.resumedElsewhere(at)) {
            resumed("resumed by " + actor + " through another worker at " + at);
            return true;
        }
        return false;
    }

    public synchronized SystemicWatch.Admit admit() {
        return enabled ? watch.admit(clock.instant()) : SystemicWatch.Admit.OPEN;
    }

    public synchronized Optional<SystemicWatch.Trip> trip() {
        return watch.trip();
    }

    @Override
    public synchronized Optional<String> stopped() {
        return enabled ? watch.trip().map(t -> "the systemic guard tripped at " + t.at() + ": " + t.cause()) : Optional.empty();
    }

    private boolean rule(SystemicWatch.Ruling ruling) {
        ruling.tripped().ifPresent(t -> {
            metrics.systemicTripped(true);
            LOG.errorf("Systemic failure suspected: %s%s; quarantining and consuming stop until a probe job succeeds"
                    + " or an operator resumes (POST /ops/consumption/resume)", t.cause(),
                    t.signature() == null ? "" : " (" + t.signature().describe() + ")");
            alerts.systemicTripped(t);
            fleet.tripped(t);
        });
        return ruling.hold();
    }

    private void resumed(String why) {
        metrics.systemicTripped(false);
        LOG.warnf("Systemic-failure guard cleared (%s); consumption resumes", why);
        alerts.systemicResumed(why);
        fleet.cleared();
    }
}

package io.poisonguard.api;

import io.poisonguard.pipeline.ConsumptionGate;
import io.poisonguard.pipeline.Poller;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Shows whether consumption runs or is paused by an open breaker. It stays UP while paused: the
 * process is healthy and waiting on purpose; restarting it would not bring the dependency back.
 */
@Readiness
@ApplicationScoped
public class ConsumptionHealth implements HealthCheck {
    private final ConsumptionGate gate;
    private final Poller poller;

    public ConsumptionHealth(ConsumptionGate gate, Poller poller) {
        this.gate = gate;
        this.poller = poller;
    }

    @Override
    public HealthCheckResponse call() {
        var r = HealthCheckResponse.named("poison-guard-consumption").up()
                .withData("polling", poller.isRunning())
                .withData("admit", gate.admit().name())
                .withData("systemic", gate.systemic())
                .withData("ledger", gate.ledger());
        gate.states().forEach((name, state) -> r.withData("breaker." + name, state));
        return r.build();
    }
}

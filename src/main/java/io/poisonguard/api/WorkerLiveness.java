package io.poisonguard.api;

import io.poisonguard.pipeline.WorkerHealth;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * DOWN once a handler thread ignored its deadline's interrupt or a handler hit an error the JVM may
 * not survive: the process cannot be trusted with more work, so the orchestrator should replace it.
 */
@Liveness
@ApplicationScoped
public class WorkerLiveness implements HealthCheck {
    private final WorkerHealth health;

    public WorkerLiveness(WorkerHealth health) {
        this.health = health;
    }

    @Override
    public HealthCheckResponse call() {
        return health.unfit()
                .map(why -> HealthCheckResponse.named("poison-guard-worker").down().withData("reason", why).build())
                .orElseGet(() -> HealthCheckResponse.named("poison-guard-worker").up().build());
    }
}

package io.poisonguard.api;

import io.poisonguard.pipeline.WorkerHealth;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * DOWN once a handler thread ignored its deadline's interrupt, a handler hit an error the JVM may
 * not survive, or the receiver thread ended while the worker should be polling: the process cannot be
 * trusted with more work (or takes none), so the orchestrator should replace it. The reason names no job.
 */
@Liveness
@ApplicationScoped
public class WorkerLiveness implements HealthCheck {
    private final WorkerHealth health;
    private final io.poisonguard.pipeline.Poller poller;

    public WorkerLiveness(WorkerHealth health, io.poisonguard.pipeline.Poller poller) {
        this.health = health;
        this.poller = poller;
    }

    @Override
    public HealthCheckResponse call() {
        // The probe answers whoever reaches the management port, and a job id may be any tenant's: the reason names no job
        // (an operator reads it from GET /ops/consumption or the log).
        return health.unfit(false).or(poller::receiverDown)
                .map(why -> HealthCheckResponse.named("poison-guard-worker").down().withData("reason", why).build())
                .orElseGet(() -> HealthCheckResponse.named("poison-guard-worker").up().build());
    }
}

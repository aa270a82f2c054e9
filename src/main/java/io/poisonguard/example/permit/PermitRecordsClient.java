package io.poisonguard.example.permit;

import io.poisonguard.failure.DependencyDownFailure;
import io.poisonguard.failure.TransientFailure;
import io.poisonguard.pacing.Pacer;
import io.smallrye.faulttolerance.api.CircuitBreakerName;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;

import java.time.temporal.ChronoUnit;

/**
 * How the permit report reaches permit-records: through a circuit breaker that opens when the
 * service is down (the poller then pauses consumption instead of burning item attempts) and a
 * pacer that holds calls to the documented quota. Breaker settings can be tuned with
 * {@code quarkus.fault-tolerance."io.poisonguard.example.permit.PermitRecordsClient/standing".circuit-breaker.*}.
 */
@Singleton
public class PermitRecordsClient {
    /** The breaker's name, listed in {@code poison-guard.consumer.pause-on-breakers}. */
    public static final String BREAKER = "permit-records";

    private final RecordsProvider provider;
    private final Pacer pacer;

    public PermitRecordsClient(RecordsProvider provider, ExampleConfig config) {
        this.provider = provider;
        this.pacer = new Pacer(config.provider().rate());
    }

    // 5xx answers and timeouts count toward the breaker as well as outright unavailability: a storm of
    // them is the dependency failing, and the open breaker then pauses consumption for it.
    @CircuitBreaker(failOn = {DependencyDownFailure.class, TransientFailure.class, java.io.IOException.class,
            java.util.concurrent.TimeoutException.class}, requestVolumeThreshold = 4, failureRatio = 0.75, delay = 10,
            delayUnit = ChronoUnit.SECONDS, successThreshold = 1)
    @CircuitBreakerName(BREAKER)
    public String standing(String tenant, String permitId) throws InterruptedException {
        pacer.acquire();
        return provider.standing(tenant, permitId);
    }
}

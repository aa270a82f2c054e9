package io.poisonguard.pipeline;

import io.poisonguard.config.PoisonGuardConfig;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import jakarta.inject.Singleton;

import java.util.List;

/**
 * Whether the poller may take work now, from the circuit breakers of the dependencies jobs call and
 * the systemic-failure guard.
 * While one is open, receiving stops (DEPENDENCY_DOWN is not the items' fault, so they must not pay
 * attempts for it); while one is half-open, a single job at a time goes through as the probe.
 */
@Singleton
public class ConsumptionGate {
    /** What the poller may do. */
    public enum Admit {
        /** Receive as usual. */
        OPEN,
        /** Receive one message, and only with nothing else in flight. */
        PROBE,
        /** Receive nothing. */
        PAUSED
    }

    static final String PAUSE_ON_BREAKERS = "poison-guard.consumer.pause-on-breakers";

    private final CircuitBreakerMaintenance breakers;
    private final List<String> names;
    private final SystemicGuard guard;
    private final LedgerGate ledger;

    public ConsumptionGate(CircuitBreakerMaintenance breakers, PoisonGuardConfig config, SystemicGuard guard, LedgerGate ledger) {
        this.breakers = breakers;
        this.ledger = ledger;
        this.guard = guard;
        this.names = config.consumer().pauseOnBreakers().orElse(List.of());
    }

    /**
     * Fails the boot, naming the key, when {@code consumer.pause-on-breakers} names a breaker this build does not have (a
     * misspelling, or the example's after its handler was taken out): every admit would throw on it, and the worker would
     * run, healthy to every probe, without ever receiving.
     */
    public void checkSettings() {
        for (String name : names) {
            try {
                breakers.currentState(name);
            } catch (IllegalArgumentException unknown) {
                throw new io.quarkus.runtime.configuration.ConfigurationException(PAUSE_ON_BREAKERS + " names '" + name
                        + "', which is no circuit breaker of this build (a @CircuitBreakerName on a dependency call): consumption"
                        + " would never start; fix the name or take it out", java.util.Set.of(PAUSE_ON_BREAKERS));
            }
        }
    }

    public Admit admit() {
        if (!ledger.open()) {
            return Admit.PAUSED;
        }
        Admit result = switch (guard.admit()) {
            case OPEN -> Admit.OPEN;
            case PROBE -> Admit.PROBE;
            case PAUSED -> Admit.PAUSED;
        };
        if (result == Admit.PAUSED) {
            return result;
        }
        for (String name : names) {
            CircuitBreakerState state = breakers.currentState(name);
            if (state == CircuitBreakerState.OPEN) {
                return Admit.PAUSED;
            }
            if (state == CircuitBreakerState.HALF_OPEN) {
                result = Admit.PROBE;
            }
        }
        return result;
    }

    /** Each watched breaker and its state, for health and metrics. */
    public java.util.Map<String, String> states() {
        java.util.Map<String, String> m = new java.util.TreeMap<>();
        names.forEach(n -> m.put(n, breakers.currentState(n).name()));
        return m;
    }

    /** Whether a watched circuit breaker is open or half-open: a dependency outage stops the work. */
    public boolean breakerStopsWork() {
        return names.stream().anyMatch(n -> breakers.currentState(n) != CircuitBreakerState.CLOSED);
    }

    /** Whether the ledger answers: {@code UP}, or when it went quiet. */
    public String ledger() {
        return ledger.downSince().map(t -> "UNAVAILABLE since " + t).orElse("UP");
    }

    /** The systemic-failure guard's state: OPEN, PROBE or PAUSED. */
    public String systemic() {
        return guard.admit().name();
    }

    public List<String> names() {
        return names;
    }
}

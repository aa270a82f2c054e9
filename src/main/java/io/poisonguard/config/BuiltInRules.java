package io.poisonguard.config;

import io.poisonguard.failure.ClassificationRule;
import io.poisonguard.failure.FailureClass;

import java.util.List;

/**
 * Classification rules every deployment gets after its own: an open circuit breaker is
 * DEPENDENCY_DOWN; input that cannot be parsed or is refused as invalid is PERMANENT; timeouts and
 * I/O are TRANSIENT.
 */
final class BuiltInRules {
    static final List<ClassificationRule> RULES = List.of(
            // An open breaker means the dependency is down, not that this job is bad.
            new ClassificationRule(org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException.class, FailureClass.DEPENDENCY_DOWN),
            new ClassificationRule(com.fasterxml.jackson.core.JsonProcessingException.class, FailureClass.PERMANENT),
            new ClassificationRule(IllegalArgumentException.class, FailureClass.PERMANENT),
            new ClassificationRule(UnsupportedOperationException.class, FailureClass.PERMANENT),
            new ClassificationRule(java.util.concurrent.TimeoutException.class, FailureClass.TRANSIENT),
            new ClassificationRule(java.net.SocketTimeoutException.class, FailureClass.TRANSIENT),
            new ClassificationRule(java.io.IOException.class, FailureClass.TRANSIENT));

    private BuiltInRules() {
    }
}

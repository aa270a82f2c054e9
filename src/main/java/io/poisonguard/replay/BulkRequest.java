package io.poisonguard.replay;

import io.poisonguard.failure.FailureClass;

import java.util.Objects;
import java.util.Optional;

/**
 * Which quarantined jobs a bulk replay takes: one tenant and one failure class (one canary answers for
 * exactly that pair), optionally one job type, a cap, and the operator's reason.
 */
public record BulkRequest(String tenant, FailureClass failureClass, Optional<String> jobType, int limit, String reason) {
    public BulkRequest {
        Objects.requireNonNull(tenant, "a bulk replay names its tenant");
        Objects.requireNonNull(failureClass, "a bulk replay names its failure class");
    }
}

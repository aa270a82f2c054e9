package io.poisonguard.replay;

import io.poisonguard.failure.FailureClass;

import java.util.Objects;
import java.util.Optional;

/**
 * Which quarantined jobs a bulk replay takes: one tenant and one failure class (one canary answers for
 * exactly that pair), optionally one job type, a cap, the operator's reason, and where in the listing to go on from
 * (the {@code next} of a selection that stopped at its read bound).
 */
public record BulkRequest(String tenant, FailureClass failureClass, Optional<String> jobType, int limit, String reason,
                          Optional<String> after) {
    public BulkRequest {
        Objects.requireNonNull(tenant, "a bulk replay names its tenant");
        Objects.requireNonNull(failureClass, "a bulk replay names its failure class");
        after = after == null ? Optional.empty() : after;
    }

    public BulkRequest(String tenant, FailureClass failureClass, Optional<String> jobType, int limit, String reason) {
        this(tenant, failureClass, jobType, limit, reason, Optional.empty());
    }
}

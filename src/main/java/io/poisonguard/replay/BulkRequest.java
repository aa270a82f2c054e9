package io.poisonguard.replay;

import io.poisonguard.failure.FailureClass;

import java.util.Optional;

/** Which quarantined jobs a bulk replay takes: a filter, a cap, and the operator's reason. */
public record BulkRequest(Optional<FailureClass> failureClass, Optional<String> tenant, Optional<String> jobType, int limit, String reason) {
}

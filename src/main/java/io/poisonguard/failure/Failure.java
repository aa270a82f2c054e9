package io.poisonguard.failure;

/**
 * A classified failure of one attempt: its class, the error's type and a message that is already
 * scrubbed and truncated, safe for logs, metrics and quarantine records.
 */
public record Failure(FailureClass failureClass, String errorType, String message) {
}

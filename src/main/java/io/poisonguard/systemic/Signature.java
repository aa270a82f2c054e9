package io.poisonguard.systemic;

import io.poisonguard.failure.FailureClass;

/**
 * How a failure looks from the outside: its class, the error's type and where it was thrown. Many
 * distinct jobs failing with one signature in a row point at the system (a bad deploy, a broken
 * setting), not at the items.
 */
public record Signature(FailureClass failureClass, String errorType, String origin) {

    /** One line for alerts and logs: {@code PERMANENT IllegalArgumentException at Provider.standing}. */
    public String describe() {
        return failureClass + " " + errorType + (origin == null || origin.isEmpty() ? "" : " at " + origin);
    }
}

package io.poisonguard.failure;

import java.util.Objects;

/**
 * A failure a handler raises when it already knows its class. Anything else a handler throws is
 * classified by {@link Classifier} rules over the cause chain.
 */
public class JobFailure extends RuntimeException {
    private final FailureClass failureClass;

    public JobFailure(FailureClass failureClass, String message, Throwable cause) {
        super(message, cause);
        this.failureClass = Objects.requireNonNull(failureClass, "failureClass");
    }

    public JobFailure(FailureClass failureClass, String message) {
        this(failureClass, message, null);
    }

    public FailureClass failureClass() {
        return failureClass;
    }

    public static JobFailure permanent(String message) {
        return new JobFailure(FailureClass.PERMANENT, message);
    }

    public static JobFailure transientFailure(String message) {
        return new TransientFailure(message);
    }

    public static JobFailure throttled(String message) {
        return new JobFailure(FailureClass.THROTTLED, message);
    }

    public static JobFailure dependencyDown(String message) {
        return new DependencyDownFailure(message);
    }
}

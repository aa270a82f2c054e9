package io.poisonguard.failure;

/**
 * The downstream as a whole is unavailable. Its own type so a circuit breaker can count exactly
 * these (and not a quota error or a bad input) when deciding to pause consumption.
 */
public class DependencyDownFailure extends JobFailure {
    public DependencyDownFailure(String message) {
        super(FailureClass.DEPENDENCY_DOWN, message);
    }
}

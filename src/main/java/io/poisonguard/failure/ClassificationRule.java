package io.poisonguard.failure;

/**
 * Maps an exception type (and its subtypes) to a failure class. Rules are checked in order against
 * every throwable in the cause chain; the first rule that matches the outermost matching throwable
 * wins.
 */
public record ClassificationRule(Class<? extends Throwable> type, FailureClass failureClass) {
    public boolean matches(Throwable t) {
        return type.isInstance(t);
    }
}

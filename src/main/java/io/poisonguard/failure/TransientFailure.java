package io.poisonguard.failure;

/**
 * A TRANSIENT failure raised by a handler (a 5xx answer, a timeout). Its own type so that a circuit
 * breaker can count it: many of them in a row mean the dependency, not the items, is failing.
 */
public class TransientFailure extends JobFailure {
    public TransientFailure(String message) {
        super(FailureClass.TRANSIENT, message);
    }
}

package io.poisonguard.quarantine;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.failure.FailureClass;

/**
 * Sends the dead-letter copy of a message: the original body and attributes plus {@code job-id},
 * {@code failure-class}, {@code attempts} and {@code quarantine-reason}.
 */
public interface DeadLetterSink {
    /** Returns the dead-letter message id. Throws when the copy is not durable. */
    String send(InboundMessage original, String jobId, FailureClass failureClass, int attempts, String reason);
}

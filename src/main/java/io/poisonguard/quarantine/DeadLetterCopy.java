package io.poisonguard.quarantine;

/**
 * What became of a quarantined job's dead-letter copy, as its quarantine record names it.
 *
 * @param detail the dead-letter message id when SENT, the queue's reason when REFUSED
 * @param sourceKept when REFUSED: whether the source message was left on the main queue (nothing else
 *                   holds the payload, so SQS's redrive policy is its backstop) rather than deleted
 */
public record DeadLetterCopy(State state, String detail, boolean sourceKept) {
    public enum State {
        /** The copy is in the dead-letter queue. */
        SENT,
        /** The dead-letter queue refused the copy for a reason that will not change (too large, invalid characters). */
        REFUSED
    }

    public static DeadLetterCopy sent(String messageId) {
        return new DeadLetterCopy(State.SENT, messageId, false);
    }

    public static DeadLetterCopy refused(String reason, boolean sourceKept) {
        return new DeadLetterCopy(State.REFUSED, reason, sourceKept);
    }
}

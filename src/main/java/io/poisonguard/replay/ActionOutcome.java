package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;

import java.util.Map;

/** What an operator action came to, for one job. */
public sealed interface ActionOutcome {
    String jobId();

    /** Sent back to the main queue as {@code generation}; its next attempt is {@code attempt}. */
    record Replayed(String jobId, int generation, int attempt) implements ActionOutcome {
    }

    /** A dry run's answer: this would be replayed as {@code generation}, attempt {@code attempt}. */
    record WouldReplay(String jobId, int generation, int attempt) implements ActionOutcome {
    }

    /**
     * Discarded on purpose; its dead-letter copies were deleted. {@code unfinished} (null when the clean-up is done) says what
     * of it did not get done and that a resolve again finishes it.
     */
    record Resolved(String jobId, int discardedCopies, String unfinished) implements ActionOutcome {
        public Resolved(String jobId, int discardedCopies) {
            this(jobId, discardedCopies, null);
        }
    }

    /** The payload, for the audited secure path only. */
    record Payload(String jobId, String body, Map<String, MessageAttribute> attributes) implements ActionOutcome {
        @Override
        public String toString() {
            return "Payload[jobId=" + jobId + ", body=<" + body.length() + " chars>]";
        }
    }

    record Refused(String jobId, Refusal refusal, String detail) implements ActionOutcome {
    }

    /** The payload is gone; the job is now UNRECOVERABLE, honestly, instead of pretending to replay. */
    record Unrecoverable(String jobId, String detail) implements ActionOutcome {
    }
}

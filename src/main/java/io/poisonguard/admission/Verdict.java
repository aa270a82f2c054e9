package io.poisonguard.admission;

/** The outcome of pre-flight admission. */
public sealed interface Verdict {
    Diagnostics diagnostics();

    /** The message fits; {@code text} is the decoded body the handler will see. */
    record Admitted(String tenant, String jobType, int schemaVersion, String text, Diagnostics diagnostics) implements Verdict {
    }

    /** Refused with a named reason (a stable, kebab-case code) and a detail safe to log. */
    record Rejected(String reason, String detail, Diagnostics diagnostics) implements Verdict {
        public String describe() {
            return reason + ": " + detail;
        }
    }
}

package io.poisonguard.admission;

/** The pre-flight bounds a message must fit before any handler sees it. */
public record AdmissionLimits(int maxBodyBytes, int maxTokens, int charsPerToken, int maxAttachments) {
    public AdmissionLimits {
        if (maxBodyBytes < 1 || maxTokens < 1 || charsPerToken < 1 || maxAttachments < 0) {
            throw new IllegalArgumentException("admission limits must be positive");
        }
    }
}

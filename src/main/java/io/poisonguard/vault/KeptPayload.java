package io.poisonguard.vault;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.admission.MessageAttribute;

import java.time.Instant;
import java.util.Map;

/**
 * A quarantined job's payload as the vault keeps it: the body and the message attributes of the copy
 * that was quarantined (the job's own, without what quarantine adds), the generation it was quarantined
 * at, and when it may be forgotten (the quarantine record's expiry).
 */
public record KeptPayload(JobKey key, int generation, String body, Map<String, MessageAttribute> attributes, Instant expiresAt) {
    public KeptPayload {
        attributes = Map.copyOf(attributes);
    }

    public String jobId() {
        return key.jobId();
    }

    @Override
    public String toString() {
        // Never the body: payloads do not reach logs.
        return "KeptPayload[key=" + key + ", generation=" + generation + ", body=<" + body.length() + " chars>, expiresAt=" + expiresAt + "]";
    }
}

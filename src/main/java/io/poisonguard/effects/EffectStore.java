package io.poisonguard.effects;

import java.time.Instant;

/**
 * Records external effects by (job id, effect name) with conditional writes, so a duplicated,
 * retried or replayed job never performs a completed effect twice.
 */
public interface EffectStore {

    /** The answer to a claim. */
    enum Claim {
        /** This caller may perform the effect now. */
        GRANTED,
        /** The effect was already performed for this job. */
        DONE,
        /** Another attempt holds a live claim on it. */
        BUSY
    }

    /** Claims the effect until {@code until}; a claim whose holder died becomes claimable when it runs out. */
    Claim claim(String jobId, String effect, String owner, Instant now, Instant until, Instant expiresAt);

    /** Marks the effect performed, for good. */
    void complete(String jobId, String effect, String owner, Instant now);

    /** Gives a claim back after the effect failed, so a later attempt may perform it. */
    void release(String jobId, String effect, String owner);
}

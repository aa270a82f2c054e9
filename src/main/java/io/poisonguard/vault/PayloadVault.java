package io.poisonguard.vault;

import io.poisonguard.ledger.JobKey;
import java.util.Optional;

/**
 * Quarantined payloads kept by job (tenant and job id), sealed (encrypted and authenticated) at rest, for as long as the
 * quarantine record lives. SQS cannot find a message by attribute, so a DLQ-only archive must scan; the
 * vault answers in one keyed read, so "no payload" from it is an answer, not the end of a bounded scan.
 * Only the audited operator actions read it.
 */
public interface PayloadVault {
    /** Whether payloads are kept at all; when not, the dead-letter queue is the only copy. */
    boolean enabled();

    /**
     * Keeps the job's payload, unless the vault already holds one of its generation or a later one (the first copy kept for
     * a quarantine is the one its record describes; a later copy under the same key replaces nothing). Durable when it
     * returns; throws when it may not be.
     */
    void keep(KeptPayload payload);

    /**
     * The job's kept payload, if there is one that has not expired.
     *
     * @throws VaultUnreadable when an entry exists but cannot be opened (incomplete, or sealed with a key
     *                         this service does not hold): the payload may exist, so its absence is not proven
     */
    Optional<KeptPayload> find(JobKey key);

    /**
     * Forgets the job's payload if it was kept at a generation below {@code below} (after a replay sent it
     * on as generation {@code below}; a resolve passes {@link Integer#MAX_VALUE}). An entry a later
     * quarantine kept meanwhile stays. Idempotent.
     */
    void discard(JobKey key, int below);

    /** The vault of a deployment that switched it off. */
    PayloadVault DISABLED = new PayloadVault() {
        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public void keep(KeptPayload payload) {
        }

        @Override
        public Optional<KeptPayload> find(JobKey key) {
            return Optional.empty();
        }

        @Override
        public void discard(JobKey key, int below) {
        }
    };
}

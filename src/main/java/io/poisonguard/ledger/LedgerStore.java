package io.poisonguard.ledger;

import java.util.Optional;

/**
 * Durable home of ledger records. Every write is conditional on the version the caller read, so a
 * lost race surfaces as {@link LedgerConflict} instead of a silent overwrite.
 */
public interface LedgerStore {

    /**
     * A strongly consistent read; a record past its expiry is treated as absent. A store that still holds
     * items keyed by job id alone (written before keys were scoped by tenant) may answer with such an item
     * when it belongs to another tenant: callers that act on the record use {@link #findOwn}, the intake
     * quarantines the copy as a tenant mismatch.
     */
    Optional<LedgerRecord> find(JobKey key);

    /** {@link #find}, keeping only this job's own record. */
    default Optional<LedgerRecord> findOwn(JobKey key) {
        return find(key).filter(key::owns);
    }

    /**
     * Whether the job's record is still the one at {@code version}: what a copy checks after keeping a payload and before
     * deleting its source, since a replay or resolve may have moved the job meanwhile.
     */
    default boolean stillAt(JobKey key, long version) {
        return findOwn(key).map(l -> l.version() == version).orElse(false);
    }

    /**
     * Writes {@code next} if the stored version still equals {@code next.version()} (or no record
     * exists when it is 0), and returns it with the incremented version.
     *
     * @throws LedgerConflict when another writer got there first
     */
    LedgerRecord write(LedgerRecord next);

    /**
     * {@link #write} for the ending of a succeeded attempt whose writer holds the job's lease. While the lease holds no
     * other writer changes the record, so a store may write it without the version condition (sharing a request with
     * other jobs' endings) if the write leaves before {@code unfencedUntil}; after that it writes as {@link #write} does.
     */
    default LedgerRecord writeSucceeded(LedgerRecord next, java.time.Instant unfencedUntil) {
        return write(next);
    }
}

package io.poisonguard.ledger;

import java.util.Optional;

/**
 * Durable home of ledger records. Every write is conditional on the version the caller read, so a
 * lost race surfaces as {@link LedgerConflict} instead of a silent overwrite.
 */
public interface LedgerStore {

    /** A strongly consistent read; a record past its expiry is treated as absent. */
    Optional<LedgerRecord> find(String jobId);

    /**
     * Writes {@code next} if the stored version still equals {@code next.version()} (or no record
     * exists when it is 0), and returns it with the incremented version.
     *
     * @throws LedgerConflict when another writer got there first
     */
    LedgerRecord write(LedgerRecord next);
}

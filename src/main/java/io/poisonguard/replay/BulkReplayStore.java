package io.poisonguard.replay;

import java.util.Optional;

/** Where bulk replays' progress is kept, so that any instance can answer for a batch another one runs. */
public interface BulkReplayStore {
    /** Writes the batch's current state over its previous one. */
    void put(BulkReplay batch);

    Optional<BulkReplay> find(String id);
}

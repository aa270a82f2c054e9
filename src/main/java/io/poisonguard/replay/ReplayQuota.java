package io.poisonguard.replay;

import java.time.Instant;

/**
 * The fleet's one count of replay sends: every instance claims a place in the current window before a replay goes out, so
 * batches and single replays running on several instances together stay within {@code replay.rate}.
 */
public interface ReplayQuota {
    /**
     * Claims one send in window {@code window} (its number since the epoch) of at most {@code limit}; false when it is full.
     * The count may be forgotten after {@code forgetAfter}.
     *
     * @throws io.poisonguard.ledger.StoreUnavailable when the count does not answer
     */
    boolean claim(long window, int limit, Instant forgetAfter);

    /** No fleet count: each instance paces its own sends only. */
    ReplayQuota NONE = (window, limit, forgetAfter) -> true;
}

package io.poisonguard.systemic;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * Where the workers of a fleet post their systemic guard, so that whichever worker answers can say which have stopped: a
 * worker posts its trip when it trips and again now and then while it stays tripped, and takes it down when it clears; an
 * operator's resume is posted too.
 */
public interface GuardBoard {
    /** {@code worker}'s guard has been tripped since {@code since}; {@code now} is when it said so. */
    void tripped(String worker, Instant since, String cause, Instant now);

    /** {@code worker}'s guard cleared. */
    void cleared(String worker);

    /** An operator resumed every worker at {@code at} (a trip before it is cleared, or being cleared). */
    void resumed(Instant at);

    /**
     * What the board says now.
     *
     * @throws io.poisonguard.ledger.StoreUnavailable when it does not answer
     */
    Board read();

    /** Forgets workers that have not posted for long (they stopped while tripped). */
    void forget(java.util.Collection<String> workers);

    /** The posted trips by worker, and the newest resume. */
    record Board(Map<String, Posted> workers, Optional<Instant> resumedAt) {
    }

    /** A worker's posted trip: since when, why, and when it last said so. */
    record Posted(Instant since, String cause, Instant heardAt) {
    }
}

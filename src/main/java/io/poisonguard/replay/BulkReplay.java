package io.poisonguard.replay;

import java.time.Instant;
import java.util.List;

/** The state of one bulk replay, as the operator API shows it. */
public record BulkReplay(
        String id,
        String actor,
        String reason,
        Status status,
        String canaryJobId,
        String canaryOutcome,
        List<ActionOutcome> outcomes,
        Instant startedAt,
        Instant finishedAt,
        String detail) {

    /** Where a bulk replay is. */
    public enum Status {
        /** The canary was sent; waiting for its outcome. */
        CANARY_RUNNING,
        /** The canary succeeded; the rest are being sent, paced. */
        WIDENING,
        COMPLETED,
        /** The canary did not succeed: nothing else was replayed. */
        CANARY_FAILED,
        /** Nothing in the selection could be replayed. */
        NOTHING_TO_REPLAY
    }
}

package io.poisonguard.replay;

import io.poisonguard.failure.FailureClass;

import java.time.Instant;
import java.util.List;

/**
 * The state of one bulk replay, as the operator API shows it and as it is kept (so any instance can answer
 * for it). A bulk replay covers one tenant and one failure class; {@code updatedAt} moves with every step, so a
 * batch whose instance died shows a running status with an old {@code updatedAt}.
 */
public record BulkReplay(
        String id,
        String actor,
        String reason,
        String tenant,
        FailureClass failureClass,
        int selected,
        Status status,
        String canaryJobId,
        String canaryOutcome,
        List<Step> outcomes,
        Instant startedAt,
        Instant updatedAt,
        Instant finishedAt,
        String detail) {

    public BulkReplay {
        outcomes = List.copyOf(outcomes);
    }

    /** One job's replay in the batch: its id, what the replay came to, and why when it was not replayed. */
    public record Step(String jobId, String outcome, String detail) {
    }

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
        NOTHING_TO_REPLAY,
        /** An error stopped the batch; the jobs not yet replayed stay quarantined. */
        STOPPED;

        public boolean running() {
            return this == CANARY_RUNNING || this == WIDENING;
        }
    }

    BulkReplay next(Status status, String canaryOutcome, List<Step> outcomes, Instant now, boolean finished, String detail) {
        return new BulkReplay(id, actor, reason, tenant, failureClass, selected, status, canaryJobId, canaryOutcome, outcomes, startedAt, now,
                finished ? now : null, detail);
    }
}

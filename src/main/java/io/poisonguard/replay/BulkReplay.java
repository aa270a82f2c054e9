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
        String detail,
        int stepsOmitted,
        int notReplayedOmitted) {

    public BulkReplay {
        outcomes = List.copyOf(outcomes);
    }

    /**
     * The state as one DynamoDB item (at most 400 KB) can keep it: every step while they fit in {@code budgetBytes}, else
     * the jobs that were not replayed first (what an operator must look at), then the newest replayed ones, in their order;
     * {@link #stepsOmitted} counts the replayed steps left out and {@link #notReplayedOmitted} the others (each job's replay
     * is in the audit trail all the same).
     */
    public BulkReplay fittedTo(int budgetBytes) {
        int total = outcomes.stream().mapToInt(Step::bytes).sum();
        if (total <= budgetBytes) {
            return this;
        }
        boolean[] keep = new boolean[outcomes.size()];
        int used = 0;
        for (int i = 0; i < outcomes.size(); i++) {
            Step s = outcomes.get(i);
            if (!s.outcome().equals("REPLAYED") && used + s.bytes() <= budgetBytes) {
                keep[i] = true;
                used += s.bytes();
            }
        }
        for (int i = outcomes.size() - 1; i >= 0; i--) {
            Step s = outcomes.get(i);
            if (!keep[i] && s.outcome().equals("REPLAYED") && used + s.bytes() <= budgetBytes) {
                keep[i] = true;
                used += s.bytes();
            }
        }
        List<Step> kept = new java.util.ArrayList<>();
        int replayedLeft = 0;
        int othersLeft = 0;
        for (int i = 0; i < outcomes.size(); i++) {
            if (keep[i]) {
                kept.add(outcomes.get(i));
            } else if (outcomes.get(i).outcome().equals("REPLAYED")) {
                replayedLeft++;
            } else {
                othersLeft++;
            }
        }
        return new BulkReplay(id, actor, reason, tenant, failureClass, selected, status, canaryJobId, canaryOutcome, kept, startedAt,
                updatedAt, finishedAt, detail, stepsOmitted + replayedLeft, notReplayedOmitted + othersLeft);
    }

    /** One job's replay in the batch: its id, what the replay came to, and why when it was not replayed. */
    public record Step(String jobId, String outcome, String detail) {
        /** About what the step takes in a stored item: its strings in UTF-8 and the names around them. */
        int bytes() {
            return 16 + utf8(jobId) + utf8(outcome) + utf8(detail);
        }

        private static int utf8(String s) {
            return s == null ? 0 : s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        }
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
        STOPPED,
        /**
         * Stopped before the end by what the batch saw, not by the fix failing its canary: a job of a wave failed again, this
         * worker's systemic guard tripped (or was tripped when the batch started, or while the canary waited), a replay met a
         * dependency not answering, or a wave's outcomes were not known within {@code replay.canary-timeout}. The jobs not yet
         * replayed stay quarantined.
         */
        HALTED,
        /**
         * Never kept: how a batch still kept as running reads once nothing has been kept of it for a while (the instance running
         * it stopped, or cannot write the table).
         */
        ABANDONED;

        public boolean running() {
            return this == CANARY_RUNNING || this == WIDENING;
        }
    }

    BulkReplay withCanary(String jobId) {
        return new BulkReplay(id, actor, reason, tenant, failureClass, selected, status, jobId, canaryOutcome, outcomes, startedAt, updatedAt,
                finishedAt, detail, stepsOmitted, notReplayedOmitted);
    }

    /** The same state, kept again at {@code now} (a running batch's readers see it move). */
    BulkReplay touched(Instant now) {
        return new BulkReplay(id, actor, reason, tenant, failureClass, selected, status, canaryJobId, canaryOutcome, outcomes, startedAt, now,
                finishedAt, detail, stepsOmitted, notReplayedOmitted);
    }

    /** How a batch kept as running reads once its instance has kept nothing since {@code updatedAt}. */
    BulkReplay abandoned(String why) {
        return new BulkReplay(id, actor, reason, tenant, failureClass, selected, Status.ABANDONED, canaryJobId, canaryOutcome, outcomes,
                startedAt, updatedAt, null, why, stepsOmitted, notReplayedOmitted);
    }

    BulkReplay next(Status status, String canaryOutcome, List<Step> outcomes, Instant now, boolean finished, String detail) {
        return new BulkReplay(id, actor, reason, tenant, failureClass, selected, status, canaryJobId, canaryOutcome, outcomes, startedAt, now,
                finished ? now : null, detail, stepsOmitted, notReplayedOmitted);
    }
}

package io.poisonguard.replay;

import io.poisonguard.ledger.JobKey;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * One bulk replay as it runs: a canary, then waves that grow while the jobs already sent keep succeeding.
 *
 * <p>The canary is the first selected job whose replay goes out (of at most {@value #CANARY_TRIES}: a job not replayed, its
 * payload gone or another action on it, says nothing of the fix). Once it has succeeded the rest follow in waves of
 * {@value #FIRST_WAVE}, doubling up to {@value #MAX_WAVE}; each wave's outcomes are read before the next is sent. A job of a
 * wave parked again, this worker's systemic guard tripping, or a wave whose outcomes are not all known within
 * {@code replay.canary-timeout} halts the batch: the jobs not yet sent stay quarantined. So a fix that holds for the canary
 * but not for the rest costs a few jobs, not the batch and a fleet-wide stop.
 *
 * <p>Before each job's replay the kept state names it ({@value #SENDING}), so a batch whose instance dies mid-step says which
 * job may be left REPLAYING.
 */
final class BatchRun {
    static final int CANARY_TRIES = 3;
    static final int FIRST_WAVE = 2;
    static final int MAX_WAVE = 64;
    /** A step whose replay was under way when the state was kept. */
    static final String SENDING = "SENDING";
    static final String FAILED_AGAIN = "FAILED_AGAIN";

    /** What a batch's run reports back: its state after a step, and its end. */
    interface Keeper {
        void progress(BulkReplay state);

        void finish(BulkReplay state, BulkReplay.Status status, String canaryOutcome, List<BulkReplay.Step> steps, String detail);
    }

    private final OperatorActions actions;
    private final WaveWatch watch;
    private final ConsumptionState consumption;
    private final Duration timeout;
    private final java.time.Clock clock;
    private final Keeper keeper;
    private final List<BulkReplay.Step> steps = new ArrayList<>();
    private BulkReplay state;

    BatchRun(BulkReplay started, OperatorActions actions, WaveWatch watch, ConsumptionState consumption, Duration timeout,
             java.time.Clock clock, Keeper keeper) {
        this.state = started;
        this.actions = actions;
        this.watch = watch;
        this.consumption = consumption;
        this.timeout = timeout;
        this.clock = clock;
        this.keeper = keeper;
    }

    /** The state last kept, for the error path. */
    BulkReplay state() {
        return state;
    }

    List<BulkReplay.Step> steps() {
        return List.copyOf(steps);
    }

    void run(List<JobKey> jobs) {
        int next = 0;
        WaveWatch.Sent canary = null;
        while (canary == null && next < Math.min(CANARY_TRIES, jobs.size())) {
            JobKey key = jobs.get(next++);
            Optional<ActionOutcome.Replayed> sent = send(key, "canary", BulkReplay.Status.CANARY_RUNNING);
            if (sent.isPresent()) {
                canary = new WaveWatch.Sent(key, sent.get().generation());
                state = state.withCanary(key.jobId());
            }
        }
        if (canary == null) {
            keeper.finish(state, BulkReplay.Status.CANARY_FAILED, "NOT_REPLAYED", steps(), "no canary went out: the first " + next
                    + " jobs were not replayed (see their steps; a job whose payload is gone or that another action holds says"
                    + " nothing of the fix); the other " + (jobs.size() - next) + " jobs stay quarantined");
            return;
        }
        keep(BulkReplay.Status.CANARY_RUNNING, null, "canary " + canary.key().jobId() + " sent; waiting for its outcome");
        WaveWatch.Result result = watch.await(List.of(canary), timeout, consumption::stopped);
        String canaryOutcome = describe(result.endings().get(canary.key()), result.stoppedBy(), timeout);
        if (!canaryOutcome.equals("SUCCEEDED")) {
            markFailedAgain(result);
            int left = jobs.size() - next;
            String why = result.stoppedBy().isPresent()
                    ? "consumption stopped while the canary " + canary.key().jobId() + " ran (" + result.stoppedBy().get() + "); the other "
                            + left + " jobs stay quarantined"
                    : canaryOutcome.startsWith(BulkReplays.NOT_STARTED)
                    ? "the canary " + canary.key().jobId() + " did not reach a worker within replay.canary-timeout (" + canaryOutcome
                            + ": its copy waits behind the main queue's backlog, so the fix is untested); it runs when its turn comes,"
                            + " and the other " + left + " jobs stay quarantined: replay them once it has succeeded"
                    : "the canary " + canary.key().jobId() + " did not succeed (" + canaryOutcome + "); the other " + left
                            + " jobs stay quarantined";
            keeper.finish(state, result.stoppedBy().isPresent() ? BulkReplay.Status.HALTED : BulkReplay.Status.CANARY_FAILED, canaryOutcome,
                    steps(), why);
            return;
        }
        widen(jobs, next, canaryOutcome);
    }

    private void widen(List<JobKey> jobs, int from, String canaryOutcome) {
        int next = from;
        int size = FIRST_WAVE;
        int wave = 1;
        long succeeded = 1;
        long unknown = 0;
        while (next < jobs.size()) {
            List<WaveWatch.Sent> sent = new ArrayList<>();
            int end = Math.min(jobs.size(), next + size);
            Optional<String> stop = consumption.stopped();
            while (next < end && stop.isEmpty()) {
                JobKey key = jobs.get(next++);
                int w = wave;
                send(key, "wave " + w, BulkReplay.Status.WIDENING).ifPresent(r -> sent.add(new WaveWatch.Sent(key, r.generation())));
                stop = consumption.stopped();
            }
            keep(BulkReplay.Status.WIDENING, canaryOutcome, "wave " + wave + ": " + sent.size() + " sent; waiting for their outcomes");
            WaveWatch.Result result = watch.await(sent, timeout, consumption::stopped);
            markFailedAgain(result);
            succeeded += result.count(WaveWatch.Ending.Succeeded.class);
            long waveUnknown = result.count(WaveWatch.Ending.Unknown.class);
            unknown += waveUnknown;
            int left = jobs.size() - next;
            String tally = tally(next, jobs.size(), succeeded, unknown);
            if (!result.failedAgain().isEmpty()) {
                List<String> failed = result.failedAgain().stream().map(e -> e.getKey().jobId()).toList();
                halt(canaryOutcome, left, failed.size() + " job(s) of wave " + wave + " failed again after the canary succeeded ("
                        + String.join(", ", failed.subList(0, Math.min(5, failed.size()))) + (failed.size() > 5 ? ", …" : "")
                        + "): the fix does not hold for every job", tally);
                return;
            }
            Optional<String> stopped = result.stoppedBy().or(consumption::stopped);
            if (stopped.isPresent()) {
                halt(canaryOutcome, left, "consumption stopped (" + stopped.get() + ")", tally);
                return;
            }
            if (waveUnknown > 0 && left > 0) {
                halt(canaryOutcome, left, waveUnknown + " job(s) of wave " + wave + " had not ended within replay.canary-timeout ("
                        + timeout.toSeconds() + "s), so nothing says the fix holds for them", tally);
                return;
            }
            size = Math.min(MAX_WAVE, size * 2);
            wave++;
        }
        keeper.finish(state, BulkReplay.Status.COMPLETED, canaryOutcome, steps(), tally(next, jobs.size(), succeeded, unknown));
    }

    private static String tally(int sentOrTried, int total, long succeeded, long unknown) {
        return sentOrTried + " of " + total + " jobs tried; " + succeeded + " succeeded"
                + (unknown > 0 ? ", " + unknown + " not ended within replay.canary-timeout (they run when their turn comes)" : "");
    }

    private void halt(String canaryOutcome, int left, String why, String tally) {
        keeper.finish(state, BulkReplay.Status.HALTED, canaryOutcome, steps(), "widening stopped: " + why + "; the other " + left
                + " jobs stay quarantined (" + tally + ")");
    }

    /**
     * Replays one job, its step named {@value #SENDING} in the kept state while it goes; returns the replay when it went out.
     */
    private Optional<ActionOutcome.Replayed> send(JobKey key, String role, BulkReplay.Status status) {
        steps.add(new BulkReplay.Step(key.jobId(), SENDING, "its replay is under way (if the batch stopped here, the job may be"
                + " REPLAYING: a replay of it re-issues it once replay.settle-time has passed)"));
        keep(status, null, state.detail());
        ActionOutcome outcome = actions.replay(key, state.actor(), state.reason() + " [bulk " + state.id() + ", " + role + "]");
        steps.set(steps.size() - 1, BulkReplays.step(outcome));
        return outcome instanceof ActionOutcome.Replayed r ? Optional.of(r) : Optional.empty();
    }

    /** The steps of jobs parked again say so, with the state and reason the ledger gives. */
    private void markFailedAgain(WaveWatch.Result result) {
        Map<String, WaveWatch.Ending.FailedAgain> failed = result.failedAgain().stream()
                .collect(Collectors.toMap(e -> e.getKey().jobId(), e -> (WaveWatch.Ending.FailedAgain) e.getValue(), (a, b) -> a));
        for (int i = 0; i < steps.size(); i++) {
            BulkReplay.Step s = steps.get(i);
            WaveWatch.Ending.FailedAgain f = failed.get(s.jobId());
            if (f != null && s.outcome().equals("REPLAYED")) {
                steps.set(i, new BulkReplay.Step(s.jobId(), FAILED_AGAIN, BulkReplays.cut(f.state() + ": " + f.reason())));
            }
        }
    }

    private void keep(BulkReplay.Status status, String canaryOutcome, String detail) {
        state = state.next(status, canaryOutcome == null ? state.canaryOutcome() : canaryOutcome, steps, clock.instant(), false, detail);
        keeper.progress(state);
    }

    /** How a watched job came out, as a canary's outcome reads. */
    static String describe(WaveWatch.Ending ending, Optional<String> stoppedBy, Duration timeout) {
        return switch (ending) {
            case WaveWatch.Ending.Succeeded s -> "SUCCEEDED";
            case WaveWatch.Ending.FailedAgain f -> f.state() + ": " + f.reason();
            case WaveWatch.Ending.MovedOn m -> "REPLAYED_AGAIN as generation " + m.generation() + " by another action";
            case WaveWatch.Ending.Unknown u when stoppedBy.isPresent() -> "NOT_ENDED: consumption stopped";
            case WaveWatch.Ending.Unknown u -> (u.started() ? "TIMED_OUT after " : BulkReplays.NOT_STARTED + " within ")
                    + timeout.toSeconds() + "s";
        };
    }
}

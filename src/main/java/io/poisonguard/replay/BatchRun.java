package io.poisonguard.replay;

import io.poisonguard.ledger.JobKey;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One bulk replay as it runs: a canary, then waves that grow while the jobs already sent keep succeeding.
 *
 * <p>The canary is the first selected job whose replay goes out (of at most {@value #CANARY_TRIES}: a job not replayed, its
 * payload gone or another action on it, says nothing of the fix). Once it has succeeded the rest follow in waves: the first
 * of {@value #FIRST_WAVE}, each next one twice as many as the last one saw succeed, never more than the batch's largest wave
 * (kept below what trips the systemic guard, so a wave that fails whole cannot stop consumption on its own). Each wave's
 * outcomes are read before the next is sent. A job of a wave parked again, this worker's systemic guard tripping, a replay
 * that met a dependency not answering, or a wave whose outcomes are not all known within {@code replay.canary-timeout}
 * halts the batch: the jobs not yet sent stay quarantined. So a fix that holds for the canary but not for the rest costs a
 * few jobs, not the batch and a fleet-wide stop.
 *
 * <p>Before each job's replay the kept state names it ({@value #SENDING}), so a batch whose instance dies mid-step says which
 * job may be left REPLAYING.
 */
final class BatchRun {
    static final int CANARY_TRIES = 3;
    static final int FIRST_WAVE = 2;
    /** The largest wave when the systemic guard is off. */
    static final int MAX_WAVE = 64;
    /** A step whose replay was under way when the state was kept. */
    static final String SENDING = "SENDING";
    static final String FAILED_AGAIN = "FAILED_AGAIN";
    /** A step replayed, then replayed again by another action while it was watched: its outcome is not this batch's to tell. */
    static final String REPLAYED_AGAIN = "REPLAYED_AGAIN";
    /** A step replayed whose outcome was not known when the watch ran out. */
    static final String NOT_ENDED = "NOT_ENDED";

    /** What a batch's run reports back: its state after a step, and its end. */
    interface Keeper {
        void progress(BulkReplay state);

        void finish(BulkReplay state, BulkReplay.Status status, String canaryOutcome, List<BulkReplay.Step> steps, String detail);
    }

    private final OperatorActions actions;
    private final WaveWatch watch;
    private final ConsumptionState consumption;
    private final Duration timeout;
    private final int maxWave;
    private final java.time.Clock clock;
    private final Keeper keeper;
    private final List<BulkReplay.Step> steps = new ArrayList<>();
    private BulkReplay state;

    BatchRun(BulkReplay started, OperatorActions actions, WaveWatch watch, ConsumptionState consumption, Duration timeout, int maxWave,
             java.time.Clock clock, Keeper keeper) {
        this.maxWave = maxWave;
        this.state = started;
        // Jobs of the selection not tried (the dry run refused them when the batch started) stay listed first.
        this.steps.addAll(started.outcomes());
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
        Optional<String> stoppedAtStart = consumption.stopped();
        if (stoppedAtStart.isPresent()) {
            keeper.finish(state.withCanary(null), BulkReplay.Status.HALTED, null, steps(), "consumption is stopped here ("
                    + stoppedAtStart.get() + "): nothing was replayed; resume consumption, then start the batch again");
            return;
        }
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
            keeper.finish(state.withCanary(null), BulkReplay.Status.CANARY_FAILED, "NOT_REPLAYED", steps(), "no canary went out: the"
                    + " first " + next + " jobs were not replayed (see their steps; a job whose payload is gone or that another action"
                    + " holds says nothing of the fix); the other " + (jobs.size() - next) + " jobs stay quarantined");
            return;
        }
        keep(BulkReplay.Status.CANARY_RUNNING, null, "canary " + canary.key().jobId() + " sent; waiting for its outcome");
        WaveWatch.Result result = watch.await(List.of(canary), timeout, consumption::stopped);
        WaveWatch.Ending ending = result.endings().get(canary.key());
        String canaryOutcome = describe(ending, result.stoppedBy(), timeout);
        if (!(ending instanceof WaveWatch.Ending.Succeeded)) {
            mark(result);
            int left = jobs.size() - next;
            String name = "the canary " + canary.key().jobId();
            String why = switch (ending) {
                case WaveWatch.Ending.Unknown u when result.stoppedBy().isPresent() -> "consumption stopped while " + name + " waited ("
                        + result.stoppedBy().get() + "), so the fix is untested";
                case WaveWatch.Ending.Unknown u when !u.started() -> name + " did not reach a worker within replay.canary-timeout ("
                        + canaryOutcome + ": its copy waits behind the main queue's backlog, so the fix is untested); it runs when its"
                        + " turn comes: replay the others once it has succeeded";
                case WaveWatch.Ending.MovedOn m -> name + " was replayed again by another action before its outcome was read ("
                        + canaryOutcome + "), so the fix is untested";
                default -> name + " did not succeed (" + canaryOutcome + ")";
            };
            // A canary that failed is a failed canary, even when the guard tripped on it in the same moment.
            BulkReplay.Status status = ending instanceof WaveWatch.Ending.Unknown && result.stoppedBy().isPresent()
                    ? BulkReplay.Status.HALTED : BulkReplay.Status.CANARY_FAILED;
            keeper.finish(state, status, canaryOutcome, steps(), why + "; the other " + left + " jobs stay quarantined");
            return;
        }
        widen(jobs, next, canaryOutcome);
    }

    private void widen(List<JobKey> jobs, int from, String canaryOutcome) {
        keep(BulkReplay.Status.WIDENING, canaryOutcome, "the canary succeeded; widening");
        int next = from;
        int size = Math.min(FIRST_WAVE, maxWave);
        int wave = 1;
        Tally tally = new Tally(jobs.size());
        tally.tried = from;
        tally.succeeded++;
        while (next < jobs.size()) {
            List<WaveWatch.Sent> sent = new ArrayList<>();
            List<ActionOutcome.Refused> unavailable = new ArrayList<>();
            int end = Math.min(jobs.size(), next + size);
            Optional<String> stop = consumption.stopped();
            while (next < end && stop.isEmpty() && unavailable.isEmpty()) {
                JobKey key = jobs.get(next++);
                ActionOutcome outcome = replay(key, "wave " + wave, BulkReplay.Status.WIDENING);
                switch (outcome) {
                    case ActionOutcome.Replayed r -> sent.add(new WaveWatch.Sent(key, r.generation()));
                    // The main queue or a store did not answer, a vault entry does not open, a DLQ is deeper than a scan (every
                    // refusal answered 503): the next job would most likely meet the same, each after a scan of the whole DLQ.
                    case ActionOutcome.Refused r when r.refusal().status() >= 500 -> unavailable.add(r);
                    default -> { }
                }
                stop = consumption.stopped();
            }
            tally.tried = next;
            keep(BulkReplay.Status.WIDENING, canaryOutcome, "wave " + wave + ": " + sent.size() + " sent; waiting for their outcomes");
            WaveWatch.Result result = watch.await(sent, timeout, consumption::stopped);
            mark(result);
            long waveSucceeded = result.count(WaveWatch.Ending.Succeeded.class);
            tally.succeeded += waveSucceeded;
            tally.notEnded += result.count(WaveWatch.Ending.Unknown.class);
            tally.movedOn += result.count(WaveWatch.Ending.MovedOn.class);
            int left = jobs.size() - next;
            if (!result.failedAgain().isEmpty()) {
                List<String> failed = result.failedAgain().stream().map(e -> e.getKey().jobId()).toList();
                tally.failedAgain += failed.size();
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
            if (!unavailable.isEmpty()) {
                ActionOutcome.Refused r = unavailable.get(0);
                halt(canaryOutcome, left, "job " + r.jobId() + "'s replay was refused for a reason the next jobs would likely meet"
                        + " too (" + r.refusal() + ": " + r.detail() + ")", tally);
                return;
            }
            if (result.count(WaveWatch.Ending.Unknown.class) > 0 && left > 0) {
                halt(canaryOutcome, left, result.count(WaveWatch.Ending.Unknown.class) + " job(s) of wave " + wave + " had not ended"
                        + " within replay.canary-timeout (" + timeout.toSeconds() + "s), so nothing says the fix holds for them", tally);
                return;
            }
            // Grows with what was seen to succeed: a wave of refusals (payloads gone) or of jobs moved on is no evidence.
            size = Math.max(1, Math.min(maxWave, (int) Math.min(Integer.MAX_VALUE, 2 * waveSucceeded)));
            wave++;
        }
        keeper.finish(state, BulkReplay.Status.COMPLETED, canaryOutcome, steps(), tally.toString());
    }

    /** What a batch's final detail counts. */
    private static final class Tally {
        final int total;
        int tried;
        long succeeded;
        long failedAgain;
        long notEnded;
        long movedOn;

        Tally(int total) {
            this.total = total;
        }

        @Override
        public String toString() {
            return tried + " of " + total + " jobs tried; " + succeeded + " succeeded"
                    + (failedAgain > 0 ? ", " + failedAgain + " failed again" : "")
                    + (notEnded > 0 ? ", " + notEnded + " not ended within replay.canary-timeout (they run when their turn comes; their"
                    + " steps say NOT_ENDED)" : "")
                    + (movedOn > 0 ? ", " + movedOn + " replayed again by another action" : "");
        }
    }

    private void halt(String canaryOutcome, int left, String why, Tally tally) {
        keeper.finish(state, BulkReplay.Status.HALTED, canaryOutcome, steps(), "widening stopped: " + why + "; the other " + left
                + " jobs stay quarantined (" + tally + ")");
    }

    private Optional<ActionOutcome.Replayed> send(JobKey key, String role, BulkReplay.Status status) {
        return replay(key, role, status) instanceof ActionOutcome.Replayed r ? Optional.of(r) : Optional.empty();
    }

    /** Replays one job, its step named {@value #SENDING} in the kept state while it goes. */
    private ActionOutcome replay(JobKey key, String role, BulkReplay.Status status) {
        steps.add(new BulkReplay.Step(key.jobId(), SENDING, "its replay is under way (if the batch stopped here, the job may be"
                + " REPLAYING: a replay of it re-issues it once replay.settle-time has passed)"));
        keep(status, null, state.detail());
        ActionOutcome outcome = actions.replay(key, state.actor(), state.reason() + " [bulk " + state.id() + ", " + role + "]");
        steps.set(steps.size() - 1, BulkReplays.step(outcome));
        return outcome;
    }

    /** The steps of jobs parked again, or not ended by the deadline, say so (the ledger's state and reason, or how far it got). */
    private void mark(WaveWatch.Result result) {
        for (int i = 0; i < steps.size(); i++) {
            BulkReplay.Step s = steps.get(i);
            WaveWatch.Ending e = result.endings().get(JobKey.of(state.tenant(), s.jobId()));
            if (!s.outcome().equals("REPLAYED") || e == null) {
                continue;
            }
            if (e instanceof WaveWatch.Ending.FailedAgain f) {
                steps.set(i, new BulkReplay.Step(s.jobId(), FAILED_AGAIN, BulkReplays.cut(f.state() + ": " + f.reason())));
            } else if (e instanceof WaveWatch.Ending.MovedOn m) {
                steps.set(i, new BulkReplay.Step(s.jobId(), REPLAYED_AGAIN, "replayed again as generation " + m.generation()
                        + " by another action, whose outcome it is"));
            } else if (e instanceof WaveWatch.Ending.Unknown u) {
                steps.set(i, new BulkReplay.Step(s.jobId(), NOT_ENDED, (u.started() ? "running" : "not yet taken by a worker")
                        + " when replay.canary-timeout ran out"));
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

package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.Settings;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Intake;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.observability.Metrics;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A job whose attempt was made durable but whose handler never got a slot (or whose turn came while consumption
 * was paused) is given back: the attempt ends ABANDONED, nothing is counted against the job, and the copy is
 * visible again at once.
 */
class GiveBackTest {

    /** SQS as far as the outcome stage uses it: records visibility changes. */
    static final class Visibility extends HeartbeatRenewalTest.QueueStub {
        final List<Duration> changes = Collections.synchronizedList(new ArrayList<>());
        /** When each change was made, by {@link #hands} when a test sets it. */
        final List<java.time.Instant> at = Collections.synchronizedList(new ArrayList<>());
        volatile HeartbeatRenewalTest.Hands hands;

        @Override
        public void delete(InboundMessage message) {
            throw new AssertionError("a copy given back is not deleted");
        }

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            changes.add(delay);
            at.add(hands == null ? null : hands.now);
        }

        /** Until when the copy is hidden, by the last change. */
        java.time.Instant hiddenUntil() {
            synchronized (changes) {
                return at.getLast().plus(changes.getLast());
            }
        }
    }

    @Test
    void anAttemptGivenBackBeforeItsHandlerStartedEndsUncountedAndItsCopyReturnsAtOnce() {
        PoisonGuardConfig config = Configs.defaults().build();
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        HeartbeatRenewalTest.Ledger ledger = new HeartbeatRenewalTest.Ledger();
        Visibility queue = new Visibility();
        Decisions decisions = new Decisions(Settings.policy(config));
        SplittableRandom random = new SplittableRandom(1);
        OutcomeStage outcomes = new OutcomeStage(ledger, queue, null, decisions, clock, random, new Metrics(new SimpleMeterRegistry()),
                null, null, null, null, null, null, config, "worker-1");

        Intake intake = decisions.intake(LedgerRecord.fresh("job-1", "tenant-a", "permit-report", 1, clock.now), Optional.empty(), 1,
                clock.now, "worker-1", new Decisions.Lane(false, 3), random);
        LedgerRecord started = ledger.write(((Intake.Run) intake).next());
        InboundMessage m = new InboundMessage("m1", "rh1", "{}", Map.of(), clock.now, 1, clock.now);

        clock.now = clock.now.plusSeconds(2);
        outcomes.giveBack(started, m, "no handler slot freed within half the visibility timeout");

        LedgerRecord stored = ledger.items.get("job-1");
        assertEquals(started.version() + 1, stored.version(), "one write ended the attempt");
        assertEquals(JobState.RETRY_WAIT, stored.state());
        assertEquals(AttemptOutcome.ABANDONED, stored.currentEntry().outcome());
        assertTrue(stored.failures().isEmpty(), "nothing counted against the job: " + stored.failures());
        assertNull(stored.leaseOwner(), "the lease is released");
        assertEquals(List.of(Duration.ZERO), queue.changes, "the copy is visible again at once");
    }

    /**
     * Ending an attempt meets a conflict (a lease renewal of its own may have landed unanswered), and the read that
     * would tell fails too while the ledger flaps. That read's failure used to escape the stage: the outcome was never
     * written, the gate stayed open, and the job sat ACTIVE until its lease ran out, then ran again as a crash. It is
     * now waited out like any write's: the gate closes, the copy stays hidden, and the ending is written once the
     * ledger answers.
     */
    @Test
    void anEndingWhoseConflictCannotBeCheckedWaitsForTheLedgerAndIsWritten() {
        PoisonGuardConfig config = Configs.defaults().build();
        HeartbeatRenewalTest.Ledger ledger = new HeartbeatRenewalTest.FlappingLedger();
        Stage stage = stage(config, ledger);

        stage.outcomes().giveBack(stage.started(), stage.message(), "the worker is stopping");

        LedgerRecord stored = ledger.items.get("job-1");
        assertEquals(AttemptOutcome.ABANDONED, stored.currentEntry().outcome(), "the attempt's end was written");
        assertTrue(stage.queue().changes.contains(config.consumer().visibilityTimeout()),
                "the copy was kept hidden meanwhile: " + stage.queue().changes);
    }

    /** An outcome stage over {@code ledger} with its own gate, and a job whose attempt started in it. */
    record Stage(OutcomeStage outcomes, LedgerGate gate, Visibility queue, LedgerRecord started, InboundMessage message,
                 HeartbeatRenewalTest.Hands clock) {
    }

    private static Stage stage(PoisonGuardConfig config, HeartbeatRenewalTest.Ledger ledger) {
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands() {
            @Override
            public java.time.Instant instant() {
                // Every look at the clock is a second later, so the gate's probes fall due without sleeping on them.
                now = now.plusSeconds(1);
                return now;
            }
        };
        Visibility queue = new Visibility();
        queue.hands = clock;
        Decisions decisions = new Decisions(Settings.policy(config));
        SplittableRandom random = new SplittableRandom(1);
        Metrics metrics = new Metrics(new SimpleMeterRegistry());
        LedgerGate gate = new LedgerGate(ledger, decisions, clock, metrics, "worker-1", config);
        OutcomeStage outcomes = new OutcomeStage(ledger, queue, null, decisions, clock, random, metrics,
                null, null, null, null, gate, null, config, "worker-1");
        Intake intake = decisions.intake(LedgerRecord.fresh("job-1", "tenant-a", "permit-report", 1, clock.now), Optional.empty(), 1,
                clock.now, "worker-1", new Decisions.Lane(false, 3), random);
        LedgerRecord started = ledger.write(((Intake.Run) intake).next());
        return new Stage(outcomes, gate, queue, started, new InboundMessage("m1", "rh1", "{}", Map.of(), clock.now, 1, clock.now), clock);
    }

    /** A ledger that answers nothing while {@code down} is set. */
    static final class DownLedger extends HeartbeatRenewalTest.Ledger {
        volatile boolean down;

        private void answer() {
            if (down) {
                throw new io.poisonguard.ledger.StoreUnavailable("the ledger", false, new java.net.SocketTimeoutException("read timed out"));
            }
        }

        @Override
        public LedgerRecord write(LedgerRecord next) {
            answer();
            return super.write(next);
        }

        @Override
        public Optional<LedgerRecord> find(io.poisonguard.ledger.JobKey key) {
            answer();
            return super.find(key);
        }
    }

    /**
     * An outage longer than {@code ledger-gate.outcome-patience}: the ending cannot be written in time and the copy is left to
     * redeliver. The attempt's record must not stay ACTIVE until its lease runs out, or the next copy charges the job a crash
     * for the ledger's outage (and runs it, and sends its notice, again).
     */
    @Test
    void anEndingNotWrittenWithinThePatienceIsWrittenWhenTheLedgerAnswersBeforeConsumptionResumes() {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.ledger-gate.outcome-patience", "5s").build();
        DownLedger ledger = new DownLedger();
        Stage stage = stage(config, ledger);

        ledger.down = true;
        stage.outcomes().giveBack(stage.started(), stage.message(), "the worker is stopping");
        assertEquals(AttemptOutcome.RUNNING, ledger.items.get("job-1").currentEntry().outcome(), "patience ran out, nothing written");

        ledger.down = false;
        assertTrue(stage.gate().awaitOpen(Duration.ofMinutes(1)), "the gate opens once the ledger answers");
        LedgerRecord stored = ledger.items.get("job-1");
        assertEquals(AttemptOutcome.ABANDONED, stored.currentEntry().outcome(), "the ending was written before consumption resumed");
        assertNull(stored.leaseOwner(), "no lease is left to run out and be charged as a crash");
    }

    /**
     * While that ending waits for the ledger, its copy must stay hidden: another worker whose ledger answers (this one's
     * outage may be its own) would otherwise find the attempt ACTIVE with its lease run out, charge the job a crash and
     * run it again, its notice too. Before, the copy was left to show again one visibility timeout after the patience.
     */
    @Test
    void theCopyOfAnEndingNotWrittenWithinThePatienceStaysHiddenUntilTheEndingIsWritten() {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.ledger-gate.outcome-patience", "5s").build();
        Duration visibility = config.consumer().visibilityTimeout();
        DownLedger ledger = new DownLedger();
        Stage stage = stage(config, ledger);

        ledger.down = true;
        stage.outcomes().giveBack(stage.started(), stage.message(), "the worker is stopping");
        java.time.Instant outageEnds = stage.clock().now.plus(visibility.multipliedBy(5));
        while (stage.clock().now.isBefore(outageEnds)) {
            assertFalse(stage.gate().open(), "the ledger does not answer");
            java.time.Instant now = stage.clock().now;
            assertTrue(stage.queue().hiddenUntil().isAfter(now), "the copy became visible at " + stage.queue().hiddenUntil()
                    + ", its ending still unwritten at " + now);
        }

        ledger.down = false;
        assertTrue(stage.gate().awaitOpen(Duration.ofMinutes(1)), "the gate opens once the ledger answers");
        assertEquals(AttemptOutcome.ABANDONED, ledger.items.get("job-1").currentEntry().outcome(), "the ending was written");
        assertEquals(Duration.ZERO, stage.queue().changes.getLast(), "then the copy shows again at once, for the record to decide");
    }
}

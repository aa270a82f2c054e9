package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.Settings;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.effects.RecordedEffects;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.observability.Metrics;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import static io.poisonguard.pipeline.HeartbeatRenewalTest.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the outcome stage lets the ledger write without its version condition: only a success, only until half the
 * attempt's lease is left (counted from the newest lease this worker wrote), and never once the heartbeat found the job
 * taken over by another attempt; every other ending keeps the condition.
 */
class SucceededEndingFenceTest {
    final HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();

    /** The ledger, recording how each ending was asked to be written: the unfenced-until time, or "conditional". */
    static final class Endings extends HeartbeatRenewalTest.Ledger {
        final List<String> asked = Collections.synchronizedList(new ArrayList<>());

        @Override
        public LedgerRecord write(LedgerRecord next) {
            if (next.state() != JobState.ACTIVE) {
                asked.add(next.state() + " conditional");
            }
            return super.write(next);
        }

        @Override
        public LedgerRecord writeSucceeded(LedgerRecord next, Instant unfencedUntil) {
            asked.add(next.state() + " unfenced until " + unfencedUntil);
            return super.write(next);
        }
    }

    final Endings ledger = new Endings();
    final PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.visibility-timeout", "60s")
            .set("poison-guard.consumer.heartbeat-interval", "20s").build();
    final Metrics metrics = new Metrics(new SimpleMeterRegistry());
    final Heartbeat heartbeat = new Heartbeat(new HeartbeatRenewalTest.QueueStub(), ledger, clock, config, "w1", Runnable::run);
    final OutcomeStage outcomes = new OutcomeStage(ledger, new ReplayOutcomeTest.Deletes(), null, new Decisions(Settings.policy(config)), clock,
            new SplittableRandom(1), metrics, heartbeat, null, null, new SystemicGuard(config, clock, null, metrics, null), null, null, config, "w1");
    final InboundMessage message = new InboundMessage("m1", "r1", "{}", Map.of(), T0, 1, T0);

    private Running running(String jobId) {
        LedgerRecord started = ledger.write(LedgerRecord.fresh(jobId, "t", "permit-report", 1, T0).withAttempt(1).moveTo(JobState.ACTIVE, T0)
                .withEntry(AttemptEntry.started(1, 1, T0, "w1"), 10).withLease("w1", T0.plusSeconds(60)));
        ledger.asked.clear();
        return heartbeat.register(message, started, T0.plus(Duration.ofMinutes(5)));
    }

    private AttemptStage.Attempted ended(Running running, AttemptResult result) {
        return new AttemptStage.Attempted(running, message, null, result, io.poisonguard.pipeline.HandlerThread.of(Thread.currentThread()), new RecordedEffects(Set.of(), 1),
                System.nanoTime() + Duration.ofMinutes(5).toNanos(), Duration.ofMinutes(5));
    }

    @Test
    void aSuccessUnderItsLeaseMayGoUnconditionallyUntilHalfTheLeaseIsLeft() {
        Running running = running("job-1");
        clock.now = T0.plusMillis(40);

        outcomes.settle(ended(running, new AttemptResult.Succeeded()));

        // Lease until T0+60s, a 60-s lease: unfenced until T0+30s.
        assertEquals(List.of("SUCCEEDED unfenced until " + T0.plusSeconds(30)), ledger.asked);
    }

    @Test
    void theTimeIsCountedFromTheNewestLeaseTheWorkerWrote() {
        Running running = running("job-4");
        // A heartbeat renewed the lease at T0+20s: until T0+80s.
        running.record(running.record().withLease("w1", T0.plusSeconds(80)));
        clock.now = T0.plusSeconds(25);

        outcomes.settle(ended(running, new AttemptResult.Succeeded()));

        assertEquals(List.of("SUCCEEDED unfenced until " + T0.plusSeconds(50)), ledger.asked);
    }

    @Test
    void aSuccessTheHeartbeatFoundTakenOverKeepsItsCondition() {
        Running running = running("job-2");
        running.takenOver(true);
        clock.now = T0.plusMillis(40);

        outcomes.settle(ended(running, new AttemptResult.Succeeded()));

        assertEquals(List.of("SUCCEEDED conditional"), ledger.asked);
    }

    @Test
    void aFailureKeepsItsCondition() {
        Running running = running("job-3");
        clock.now = T0.plusMillis(40);

        outcomes.settle(ended(running, new AttemptResult.Failed(new io.poisonguard.failure.Failure(io.poisonguard.failure.FailureClass.TRANSIENT,
                "UpstreamTimeout", "upstream timed out"), new io.poisonguard.systemic.Signature(io.poisonguard.failure.FailureClass.TRANSIENT, "UpstreamTimeout", "permit-report"))));

        assertEquals(1, ledger.asked.size());
        assertEquals(true, ledger.asked.get(0).endsWith(" conditional"), ledger.asked.toString());
    }
}

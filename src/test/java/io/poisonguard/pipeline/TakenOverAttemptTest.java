package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.effects.RecordedEffects;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static io.poisonguard.pipeline.HeartbeatRenewalTest.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * An attempt whose job another worker took over (this one paused past its lease: a long GC, a VM pause, a ledger brownout
 * that stopped its renewals) performs none of the effects deferred to its success: the other attempt performed and recorded
 * them, so a second completion notice would be an effect repeated after it was recorded.
 */
class TakenOverAttemptTest {
    final HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
    final DownLedger ledger = new DownLedger();

    /** A ledger that stops answering when told. */
    static final class DownLedger extends HeartbeatRenewalTest.Ledger {
        volatile boolean down;

        @Override
        public LedgerRecord write(LedgerRecord next) {
            if (down) {
                throw new io.poisonguard.ledger.StoreUnavailable("the ledger", true, new java.net.SocketTimeoutException("timed out"));
            }
            return super.write(next);
        }
    }
    final PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.visibility-timeout", "60s")
            .set("poison-guard.consumer.heartbeat-interval", "20s").build();
    final Heartbeat heartbeat = new Heartbeat(new HeartbeatRenewalTest.QueueStub(), ledger, clock, config, "w1", Runnable::run);
    final AttemptStage stage = new AttemptStage(null, null, clock, null, heartbeat, null, "w1", config);
    final InboundMessage message = new InboundMessage("m1", "r1", "{}", Map.of(), T0, 1, T0);
    final AtomicInteger notices = new AtomicInteger();
    final RecordedEffects effects = new RecordedEffects(Set.of(), 1);

    private LedgerRecord started() {
        return ledger.write(LedgerRecord.fresh("job-1", "t", "permit-report", 1, T0).withAttempt(1).moveTo(JobState.ACTIVE, T0)
                .withEntry(AttemptEntry.started(1, 1, T0, "w1"), 10).withLease("w1", T0.plusSeconds(60)));
    }

    /** Another worker found the lease run out, ran attempt 2, sent the notice and recorded it. */
    private void takenOverAndSucceededElsewhere() {
        LedgerRecord stored = ledger.find(JobKey.of("t", "job-1")).orElseThrow();
        LedgerRecord second = ledger.write(stored.withAttempt(2).withEntry(AttemptEntry.started(2, 1, clock.now, "w2"), 10)
                .withLease("w2", clock.now.plusSeconds(60)));
        ledger.write(second.moveTo(JobState.SUCCEEDED, clock.now).withLease(null, null).withEffects(Map.of("completion-notice", 2)));
    }

    /** Attempt 1 of job-1, started at T0 under a 60-s lease, seen {@code seconds} later. */
    private Running runningFor(long seconds) {
        Running running = heartbeat.register(message, started(), T0.plus(Duration.ofMinutes(5)));
        clock.now = T0.plusSeconds(seconds);
        return running;
    }

    private AttemptStage.Attempted succeeded(Running running) {
        effects.onceOnSuccess("completion-notice", notices::incrementAndGet);
        return new AttemptStage.Attempted(running, message, null, new AttemptResult.Succeeded(), HandlerThread.of(Thread.currentThread()), effects,
                System.nanoTime() + java.time.Duration.ofMinutes(5).toNanos(), java.time.Duration.ofMinutes(5));
    }

    @Test
    void anAttemptTheHeartbeatFoundTakenOverSendsNoDeferredNotice() {
        Running running = runningFor(90);
        takenOverAndSucceededElsewhere();
        heartbeat.beat();

        stage.afterHandler(succeeded(running));

        assertEquals(0, notices.get(), "the notice attempt 2 sent and recorded is not sent again");
    }

    @Test
    void anAttemptWhoseLeaseRanOutBeforeTheHeartbeatNoticedChecksBeforeItsDeferredNotice() {
        Running running = runningFor(90);
        takenOverAndSucceededElsewhere();

        stage.afterHandler(succeeded(running));

        assertEquals(0, notices.get(), "the notice attempt 2 sent and recorded is not sent again");
    }

    @Test
    void anAttemptThatStillHoldsItsLeaseSendsItsNoticeWithoutAskingTheLedger() {
        Running running = runningFor(30);
        int writes = ledger.writes.get();

        AttemptStage.Attempted after = stage.afterHandler(succeeded(running));

        assertEquals(1, notices.get());
        assertInstanceOf(AttemptResult.Succeeded.class, after.result());
        assertEquals(Map.of("completion-notice", 1), effects.performed());
        assertEquals(writes, ledger.writes.get(), "a live lease needs no ledger call");
    }

    @Test
    void anAttemptWhoseLeaseRanOutButStillHoldsTheJobRenewsItAndSendsItsNotice() {
        Running running = runningFor(90);

        stage.afterHandler(succeeded(running));

        assertEquals(1, notices.get());
        LedgerRecord stored = ledger.find(JobKey.of("t", "job-1")).orElseThrow();
        assertEquals("w1", stored.leaseOwner());
        assertEquals(T0.plusSeconds(150), stored.leaseUntil(), "the lease was taken up again before the notice went out");
    }

    @Test
    void anAttemptWhoseLeaseRanOutAndWhoseLedgerDoesNotAnswerSendsNothingAndIsGivenBackUncounted() {
        Running running = runningFor(90);
        ledger.down = true;

        AttemptStage.Attempted after = stage.afterHandler(succeeded(running));

        assertEquals(0, notices.get(), "not known to hold the job: no notice");
        assertInstanceOf(AttemptResult.StoreDown.class, after.result(), "and no success recorded without its notice");
    }
}

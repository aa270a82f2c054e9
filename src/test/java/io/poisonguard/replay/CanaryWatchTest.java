package io.poisonguard.replay;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bulk replay waits for its canary's outcome by reading the ledger. One read the ledger does not answer (a throttle, a
 * timeout) used to end the whole batch: STOPPED, "after 0 of N jobs", while the canary it had sent ran on unwatched.
 */
class CanaryWatchTest {
    @Test
    void aLedgerReadThatFailsWhileTheCanaryRunsDoesNotEndTheWatch() {
        Instant now = Instant.now();
        JobKey canary = JobKey.of("acme", "canary-1");
        LedgerRecord succeeded = LedgerRecord.fresh("canary-1", "acme", "permit-report", 2, now).moveTo(JobState.ACTIVE, now)
                .moveTo(JobState.SUCCEEDED, now);
        AtomicInteger reads = new AtomicInteger();
        LedgerStore flaky = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                if (reads.incrementAndGet() == 1) {
                    throw new StoreUnavailable("the ledger", false, new java.net.SocketTimeoutException("read timed out"));
                }
                return Optional.of(succeeded);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                throw new AssertionError("the watch only reads");
            }
        };
        WaveWatch watch = new WaveWatch(flaky, Clock.systemUTC());

        WaveWatch.Result result = watch.await(List.of(new WaveWatch.Sent(canary, 2)), Duration.ofSeconds(30), Optional::empty);

        assertEquals("SUCCEEDED", BatchRun.describe(result.endings().get(canary), result.stoppedBy(), Duration.ofSeconds(30)));
        assertEquals(2, reads.get(), "read again after the failed read");
    }

    /**
     * A canary whose copy waits behind the main queue's backlog never starts within the canary timeout. It was reported as
     * "TIMED_OUT", and the batch as "the canary did not succeed": an operator read it as a fix that failed. It is now
     * reported as not started, which says nothing of the fix.
     */
    @Test
    void aCanaryThatNeverStartedWithinTheTimeoutIsReportedAsNotStartedNotAsAFailure() {
        Instant now = Instant.now();
        JobKey canary = JobKey.of("acme", "canary-2");
        LedgerRecord waiting = LedgerRecord.fresh("canary-2", "acme", "permit-report", 2, now).moveTo(JobState.ACTIVE, now)
                .moveTo(JobState.QUARANTINED, now).moveTo(JobState.REPLAYING, now);
        LedgerStore ledger = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                return Optional.of(waiting);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                throw new AssertionError("the watch only reads");
            }
        };
        WaveWatch watch = new WaveWatch(ledger, Clock.systemUTC());

        WaveWatch.Result result = watch.await(List.of(new WaveWatch.Sent(canary, 2)), Duration.ofSeconds(1), Optional::empty);
        String outcome = BatchRun.describe(result.endings().get(canary), result.stoppedBy(), Duration.ofSeconds(1));

        assertTrue(outcome.startsWith("NOT_STARTED"), outcome);
    }
}

package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Configs;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The heartbeat renews the ledger lease of a running attempt, and only up to the attempt's deadline. */
class HeartbeatRenewalTest {
    static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    /** A clock the test moves. */
    static class Hands extends Clock {
        Instant now = T0;

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    /** Versioned writes, as the DynamoDB store does them. */
    static class Ledger implements LedgerStore {
        final Map<String, LedgerRecord> items = new HashMap<>();
        final AtomicInteger writes = new AtomicInteger();

        @Override
        public Optional<LedgerRecord> find(io.poisonguard.ledger.JobKey key) {
            return Optional.ofNullable(items.get(key.jobId()));
        }

        @Override
        public LedgerRecord write(LedgerRecord next) {
            LedgerRecord stored = items.get(next.jobId());
            if ((stored == null ? 0 : stored.version()) != next.version()) {
                throw new LedgerConflict(next.jobId(), next.version());
            }
            writes.incrementAndGet();
            LedgerRecord written = next.withVersion(next.version() + 1);
            items.put(next.jobId(), written);
            return written;
        }
    }

    /** SQS that receives nothing and accepts every delete and visibility change; tests override what they watch. */
    static class QueueStub implements SourceQueue {
        @Override
        public List<InboundMessage> receive(int max, Duration wait, Duration visibility) {
            return List.of();
        }

        @Override
        public void delete(InboundMessage message) {
        }

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
        }

        @Override
        public void flush() {
        }
    }

    /** SQS refusing every visibility change (a stale receipt, or SQS unreachable). */
    static final class RefusingQueue extends QueueStub {
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            refused.incrementAndGet();
            throw new IllegalStateException("ReceiptHandleIsInvalid");
        }
    }

    /**
     * A ledger that flaps once: its first write of an existing record conflicts (as if an earlier write of ours had
     * landed unanswered), and its first read fails as unavailable.
     */
    static final class FlappingLedger extends Ledger {
        private final AtomicInteger conflicts = new AtomicInteger();
        private final AtomicInteger failedReads = new AtomicInteger();

        @Override
        public LedgerRecord write(LedgerRecord next) {
            if (next.version() > 0 && conflicts.getAndIncrement() == 0) {
                throw new LedgerConflict(next.jobId(), next.version());
            }
            return super.write(next);
        }

        @Override
        public Optional<LedgerRecord> find(io.poisonguard.ledger.JobKey key) {
            if (failedReads.getAndIncrement() == 0) {
                throw new io.poisonguard.ledger.StoreUnavailable("the ledger", false, new java.net.SocketTimeoutException("read timed out"));
            }
            return super.find(key);
        }
    }

    final Hands clock = new Hands();
    final Ledger ledger = new Ledger();
    final RefusingQueue queue = new RefusingQueue();
    final Heartbeat heartbeat = new Heartbeat(queue, ledger, clock, Configs.defaults()
            .set("poison-guard.consumer.visibility-timeout", "60s").set("poison-guard.consumer.heartbeat-interval", "20s").build(), "w1", Runnable::run);
    final InboundMessage message = new InboundMessage("m1", "r1", "{}", Map.of(), T0, 1, T0);

    private LedgerRecord started() {
        LedgerRecord r = LedgerRecord.fresh("job-1", "t", "permit-report", 1, T0).withAttempt(1).moveTo(JobState.ACTIVE, T0)
                .withEntry(AttemptEntry.started(1, 1, T0, "w1"), 10).withLease("w1", T0.plusSeconds(60));
        return ledger.write(r);
    }

    @Test
    void theLeaseIsRenewedEvenWhenTheVisibilityChangeFails() {
        heartbeat.register(message, started(), T0.plus(Duration.ofMinutes(5)));
        clock.now = T0.plusSeconds(21);
        heartbeat.beat();
        assertEquals(1, queue.refused.get(), "the visibility change was tried");
        assertEquals(T0.plusSeconds(81), ledger.find(io.poisonguard.ledger.JobKey.of("tenant-a", "job-1")).orElseThrow().leaseUntil(),
                "the ledger lease still says the attempt runs, so a second copy waits instead of running beside it");
    }

    @Test
    void noLeaseIsRenewedPastTheAttemptsDeadline() {
        heartbeat.register(message, started(), T0.plusSeconds(30));
        clock.now = T0.plusSeconds(31);
        heartbeat.beat();
        assertEquals(0, queue.refused.get(), "no visibility change past the deadline");
        assertEquals(1, ledger.writes.get(), "only the start was written");
        assertEquals(T0.plusSeconds(60), ledger.find(io.poisonguard.ledger.JobKey.of("tenant-a", "job-1")).orElseThrow().leaseUntil());
    }

    /** SQS whose visibility changes hang for {@code hang} of the test's clock, then fail (a wedged connection). */
    static final class HangingQueue extends QueueStub {
        private final Hands clock;
        private final Duration hang;

        HangingQueue(Hands clock, Duration hang) {
            this.clock = clock;
            this.hang = hang;
        }

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            clock.now = clock.now.plus(hang);
            throw new IllegalStateException("the SDK gave up on ChangeMessageVisibility");
        }
    }

    private static LedgerRecord started(LedgerStore ledger, String jobId) {
        return ledger.write(LedgerRecord.fresh(jobId, "t", "permit-report", 1, T0).withAttempt(1).moveTo(JobState.ACTIVE, T0)
                .withEntry(AttemptEntry.started(1, 1, T0, "w1"), 10).withLease("w1", T0.plusSeconds(60)));
    }

    /**
     * One beat renews every running job in turn. A visibility change that hangs (30 s here, as an SQS call with its
     * attempt timeout and a retry can) used to hold every lease behind it, and each lease was counted from the beat's
     * start, not from its write: the second job's lease was written at T0+81 s saying "until T0+81 s", 21 s after the
     * lease it renewed had run out, so another worker could take a running job for a crash. Each lease is now written
     * first and counted from its own write.
     */
    @Test
    void aHangingVisibilityChangeLetsNoLeaseRunOut() {
        List<Instant[]> leaseWrites = new java.util.ArrayList<>();
        Ledger timed = new Ledger() {
            @Override
            public LedgerRecord write(LedgerRecord next) {
                LedgerRecord written = super.write(next);
                leaseWrites.add(new Instant[] {clock.now, written.leaseUntil()});
                return written;
            }
        };
        Heartbeat beating = new Heartbeat(new HangingQueue(clock, Duration.ofSeconds(30)), timed, clock, Configs.defaults()
                .set("poison-guard.consumer.visibility-timeout", "60s").set("poison-guard.consumer.heartbeat-interval", "20s").build(), "w1",
                Runnable::run);
        beating.register(new InboundMessage("m1", "r1", "{}", Map.of(), T0, 1, T0), started(timed, "job-1"), T0.plus(Duration.ofMinutes(5)));
        beating.register(new InboundMessage("m2", "r2", "{}", Map.of(), T0, 1, T0), started(timed, "job-2"), T0.plus(Duration.ofMinutes(5)));
        leaseWrites.clear();
        clock.now = T0.plusSeconds(21);

        beating.beat();

        assertEquals(2, leaseWrites.size(), "both leases were renewed");
        for (Instant[] w : leaseWrites) {
            org.junit.jupiter.api.Assertions.assertTrue(w[0].isBefore(T0.plusSeconds(60)),
                    "a lease renewed at " + w[0] + ", after the one it renewed ran out at T0+60s");
            assertEquals(w[0].plusSeconds(60), w[1], "a lease is counted from its own write");
        }
    }

    /**
     * A renewal that conflicts is checked by reading the record (an earlier renewal may have landed without an
     * answer). When that read fails too, nothing says the lease was lost: the job stays in the heartbeat and is
     * renewed on a later beat. Before, a failed read counted as "taken over", and the job ran on unrenewed until
     * SQS gave its copy to another worker.
     */
    @Test
    void aConflictWhoseCheckingReadFailsKeepsTheJobBeating() {
        Ledger flapping = new FlappingLedger();
        Heartbeat beating = new Heartbeat(queue, flapping, clock, Configs.defaults()
                .set("poison-guard.consumer.visibility-timeout", "60s").set("poison-guard.consumer.heartbeat-interval", "20s").build(), "w1",
                Runnable::run);
        beating.register(message, started(flapping, "job-1"), T0.plus(Duration.ofMinutes(5)));
        clock.now = T0.plusSeconds(21);
        beating.beat();
        assertEquals(1, beating.inFlight(), "a renewal whose outcome could not be checked is not a lost lease");
        assertEquals(1, queue.refused.get(), "and its copy is kept hidden meanwhile (the visibility change was tried)");

        clock.now = T0.plusSeconds(42);
        beating.beat();
        assertEquals(T0.plusSeconds(102), flapping.find(io.poisonguard.ledger.JobKey.of("t", "job-1")).orElseThrow().leaseUntil(),
                "the next beat renews the lease");
    }

    /** SQS accepting every visibility change, counting them. */
    static final class CountingQueue extends QueueStub {
        final AtomicInteger hidden = new AtomicInteger();

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            hidden.incrementAndGet();
        }
    }

    /**
     * The lease and the copy's visibility were renewed together, the visibility only after the lease's write. When this
     * worker's ledger did not answer for longer than a visibility timeout, the copy showed again with its lease run out:
     * another worker charged the job a crash and ran it beside the handler still running here. The copy is now kept hidden
     * (once an interval, not every tick) while the lease cannot be written, and the lease is renewed once the ledger answers.
     */
    @Test
    void aRenewalTheLedgerDoesNotAnswerStillKeepsTheCopyHiddenOnceAnInterval() {
        TakenOverAttemptTest.DownLedger down = new TakenOverAttemptTest.DownLedger();
        CountingQueue counting = new CountingQueue();
        Heartbeat beating = new Heartbeat(counting, down, clock, Configs.defaults()
                .set("poison-guard.consumer.visibility-timeout", "60s").set("poison-guard.consumer.heartbeat-interval", "20s").build(),
                "w1", Runnable::run);
        LedgerRecord started = down.write(LedgerRecord.fresh("job-1", "t", "permit-report", 1, T0).withAttempt(1).moveTo(JobState.ACTIVE, T0)
                .withEntry(AttemptEntry.started(1, 1, T0, "w1"), 10).withLease("w1", T0.plusSeconds(60)));
        beating.register(message, started, T0.plusSeconds(300));
        down.down = true;

        clock.now = T0.plusSeconds(21);
        beating.beat();
        assertEquals(1, counting.hidden.get(), "the copy is hidden again though the lease was not written");
        clock.now = T0.plusSeconds(26);
        beating.beat();
        assertEquals(1, counting.hidden.get(), "not again within the interval (the lease is tried again)");
        clock.now = T0.plusSeconds(42);
        beating.beat();
        assertEquals(2, counting.hidden.get(), "and again an interval later");

        down.down = false;
        clock.now = T0.plusSeconds(47);
        beating.beat();
        assertEquals(T0.plusSeconds(107), down.find(io.poisonguard.ledger.JobKey.of("t", "job-1")).orElseThrow().leaseUntil(),
                "the lease is renewed once the ledger answers");
    }

    /**
     * The beats ran on a scheduled executor, whose task ends for good at the first throwable: one error in one beat (a
     * renewal thread that could not be started, out of memory) ended every renewal of the process, and every attempt
     * longer than a visibility timeout was then taken for a crash and run again elsewhere. The beats go on now.
     */
    @Test
    void anErrorInOneBeatDoesNotEndTheRenewals() {
        AtomicInteger tasks = new AtomicInteger();
        java.util.concurrent.Executor failingOnce = task -> {
            if (tasks.getAndIncrement() == 0) {
                throw new OutOfMemoryError("unable to create native thread (simulated)");
            }
            task.run();
        };
        Heartbeat beating = new Heartbeat(new QueueStub(), ledger, clock, Configs.defaults()
                .set("poison-guard.consumer.visibility-timeout", "60s").set("poison-guard.consumer.heartbeat-interval", "400ms").build(),
                "w1", failingOnce);
        beating.register(message, started(), T0.plusSeconds(300));
        clock.now = T0.plusSeconds(1);
        int before = ledger.writes.get();
        beating.start();
        try {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ledger.writes.get() > before);
        } finally {
            beating.stop();
        }
        assertEquals(2, tasks.get(), "the renewal after the failed one ran");
    }
}

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
    static final class Hands extends Clock {
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
    static final class Ledger implements LedgerStore {
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

    /** SQS refusing every visibility change (a stale receipt, or SQS unreachable). */
    static final class RefusingQueue implements SourceQueue {
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public List<InboundMessage> receive(int max, Duration wait, Duration visibility) {
            return List.of();
        }

        @Override
        public void delete(InboundMessage message) {
        }

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            refused.incrementAndGet();
            throw new IllegalStateException("ReceiptHandleIsInvalid");
        }

        @Override
        public void flush() {
        }
    }

    final Hands clock = new Hands();
    final Ledger ledger = new Ledger();
    final RefusingQueue queue = new RefusingQueue();
    final Heartbeat heartbeat = new Heartbeat(queue, ledger, clock, Configs.defaults()
            .set("poison-guard.consumer.visibility-timeout", "60s").set("poison-guard.consumer.heartbeat-interval", "20s").build(), "w1");
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
}

package io.poisonguard.replay;

import io.poisonguard.config.Configs;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code replay.rate} was each instance's own: two instances replaying at once (two batches, or operators on instances behind
 * one address) sent twice the rate the downstream was promised. Sends are now counted across the fleet in windows of whole
 * seconds, here through a count the two instances share as they would share the table.
 */
class FleetReplayRateTest {
    private static final double RATE = 4;
    private static final int PER_INSTANCE = 8;

    /** A window count the instances share, as the bulk replays table is shared. */
    static final class SharedCount implements ReplayQuota {
        final Map<Long, Integer> sent = new ConcurrentHashMap<>();

        @Override
        public synchronized boolean claim(long window, int limit, Instant forgetAfter) {
            int now = sent.getOrDefault(window, 0);
            if (now >= limit) {
                return false;
            }
            sent.put(window, now + 1);
            return true;
        }
    }

    @Test
    void twoInstancesReplayingAtOnceSendWithinTheRateTogether() throws Exception {
        List<Instant> sends = new CopyOnWriteArrayList<>();
        SharedCount count = new SharedCount();
        OperatorActions one = actions(sends, count);
        OperatorActions two = actions(sends, count);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> a = pool.submit(() -> IntStream.range(0, PER_INSTANCE).forEach(i ->
                    assertInstanceOf(ActionOutcome.Replayed.class, one.replay(JobKey.of("acme", "a-" + i), "olga", "fixed"))));
            Future<?> b = pool.submit(() -> IntStream.range(0, PER_INSTANCE).forEach(i ->
                    assertInstanceOf(ActionOutcome.Replayed.class, two.replay(JobKey.of("acme", "b-" + i), "pat", "fixed"))));
            a.get();
            b.get();
        } finally {
            pool.shutdown();
        }

        assertEquals(2 * PER_INSTANCE, sends.size());
        Map<Long, Long> perSecond = sends.stream().collect(Collectors.groupingBy(Instant::getEpochSecond, TreeMap::new, Collectors.counting()));
        assertTrue(perSecond.values().stream().allMatch(n -> n <= RATE), "sends per second across both instances: " + perSecond.values());
    }

    private static OperatorActions actions(List<Instant> sends, ReplayQuota quota) {
        Instant then = Instant.now().minus(Duration.ofHours(1));
        Map<JobKey, LedgerRecord> ledger = new ConcurrentHashMap<>();
        LedgerStore store = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                return Optional.of(ledger.computeIfAbsent(key, k -> LedgerRecord.fresh(k.jobId(), k.tenant(), "permit-report", 1, then)
                        .moveTo(JobState.ACTIVE, then).moveTo(JobState.QUARANTINED, then)));
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                LedgerRecord written = next.withVersion(next.version() + 1);
                ledger.put(JobKey.of(next.tenant(), next.jobId()), written);
                return written;
            }
        };
        QuarantineStore quarantine = ReplayFakes.quarantine(key -> Optional.of(ReplayFakes.record(key, then)));
        PayloadVault vault = ReplayFakes.vault(key -> Optional.of(new KeptPayload(key, 1, "{}", Map.of(), then.plus(Duration.ofDays(14)))));
        return new OperatorActions(store, quarantine, ReplayFakes.tenants(), ReplayFakes.emptyArchive(), vault,
                (body, attributes) -> sends.add(Instant.now()), ReplayFakes.audit(new CopyOnWriteArrayList<>()),
                Clock.systemUTC(), new CodeVersion("test"), Configs.defaults().set("poison-guard.replay.rate", Double.toString(RATE)).build(),
                quota);
    }
}

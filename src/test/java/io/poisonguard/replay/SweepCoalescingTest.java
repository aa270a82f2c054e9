package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
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
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replay from the vault answers at once and looks for the job's dead-letter copies in the background. Each replay looked on
 * its own: a scan of the whole DLQ (the process's one scan lock held, every copy hidden meanwhile) per replayed job, so a bulk
 * replay of hundreds queued hundreds of full scans, and every operator's resolve and vault-less replay waited behind them. The
 * look-ups waiting now share one scan.
 */
class SweepCoalescingTest {
    private static final String TENANT = "acme";
    private static final int JOBS = 20;

    /** A dead-letter queue holding one old copy of each job; its first scan waits until the test lets it go. */
    static class CountingArchive implements PayloadArchive {
        final AtomicInteger scans = new AtomicInteger();
        final Set<String> deleted = ConcurrentHashMap.newKeySet();
        final CountDownLatch firstScanMayEnd = new CountDownLatch(1);

        ArchivedMessage copy(JobKey key) {
            return new ArchivedMessage("m-" + key.jobId(), "r-" + key.jobId(), "{}", Map.of(WireAttributes.JOB_ID,
                    MessageAttribute.string(key.jobId()), WireAttributes.TENANT, MessageAttribute.string(TENANT),
                    WireAttributes.GENERATION, MessageAttribute.number(1)));
        }

        void scanned() {
            if (scans.incrementAndGet() == 1) {
                try {
                    firstScanMayEnd.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public ArchiveScan find(JobKey key) {
            scanned();
            return new ArchiveScan(deleted.contains(key.jobId()) ? List.of() : List.of(copy(key)), true);
        }

        @Override
        public Map<JobKey, List<ArchivedMessage>> takeAll(Collection<JobKey> keys) {
            scanned();
            Map<JobKey, List<ArchivedMessage>> found = new java.util.HashMap<>();
            keys.stream().filter(k -> !deleted.contains(k.jobId())).forEach(k -> found.put(k, List.of(copy(k))));
            return found;
        }

        @Override
        public int delete(List<ArchivedMessage> copies) {
            copies.forEach(c -> deleted.add(c.messageId().substring(2)));
            return copies.size();
        }

        @Override
        public void release(List<ArchivedMessage> copies) {
        }

        @Override
        public boolean someHidden() {
            return false;
        }
    }

    @Test
    void theDeadLetterLookUpsOfManyReplaysFromTheVaultShareScans() {
        CountingArchive archive = new CountingArchive();
        OperatorActions actions = actions(archive);
        List<JobKey> jobs = IntStream.rangeClosed(1, JOBS).mapToObj(i -> JobKey.of(TENANT, "v-" + i)).toList();

        for (JobKey job : jobs) {
            assertInstanceOf(ActionOutcome.Replayed.class, actions.replay(job, "olga", "reader shipped"));
        }
        archive.firstScanMayEnd.countDown();

        await().atMost(Duration.ofSeconds(30)).until(() -> archive.deleted.size() == JOBS);
        assertTrue(archive.scans.get() <= 3, JOBS + " replays from the vault scanned the dead-letter queue " + archive.scans.get() + " times");
    }

    private static OperatorActions actions(PayloadArchive archive) {
        Instant then = Instant.now().minus(Duration.ofHours(1));
        Map<JobKey, LedgerRecord> ledger = new ConcurrentHashMap<>();
        LedgerStore store = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                return Optional.of(ledger.computeIfAbsent(key, k -> LedgerRecord.fresh(k.jobId(), TENANT, "permit-report", 1, then)
                        .moveTo(JobState.ACTIVE, then).moveTo(JobState.QUARANTINED, then)));
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                LedgerRecord written = next.withVersion(next.version() + 1);
                ledger.put(JobKey.of(TENANT, next.jobId()), written);
                return written;
            }
        };
        QuarantineStore quarantine = ReplayFakes.quarantine(key -> Optional.of(ReplayFakes.record(key, then)));
        PayloadVault vault = ReplayFakes.vault(key -> Optional.of(new KeptPayload(key, 1, "{}", Map.of(), then.plus(Duration.ofDays(14)))));
        return new OperatorActions(store, quarantine, ReplayFakes.tenants(), archive, vault, (body, attributes) -> { },
                ReplayFakes.audit(new java.util.concurrent.CopyOnWriteArrayList<>()), Clock.systemUTC(),
                new CodeVersion("test"), Configs.defaults().set("poison-guard.replay.rate", "1000").build(), ReplayQuota.NONE);
    }
}

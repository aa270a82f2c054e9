package io.poisonguard.replay;

import io.poisonguard.audit.AuditEntry;
import io.poisonguard.config.Configs;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.net.SocketTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A resolve whose discard of the kept payload got no answer (the payloads table throttled) answered RESOLVED as if all was
 * done: a second resolve then took the clean-up for done and never discarded it again, and the payload view showed the
 * sealed payload of a job resolved for good until the entry's TTL, up to 14 days later. The answer now says the clean-up is
 * unfinished, the view shows the payload to no one, its discard is tried again in the background, and a resolve again
 * discards it too.
 */
class ResolveCleanUpTest {
    private static final JobKey JOB = JobKey.of("acme", "job-1");

    @Test
    void aResolveWhoseDiscardFailedSaysSoShowsThePayloadToNoOneAndFinishesItInTheBackground() {
        Instant then = Instant.now().minus(Duration.ofHours(1));
        LedgerRecord[] stored = {LedgerRecord.fresh(JOB.jobId(), JOB.tenant(), "permit-report", 1, then).moveTo(JobState.ACTIVE, then)
                .moveTo(JobState.QUARANTINED, then)};
        LedgerStore ledger = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                return Optional.of(stored[0]);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                stored[0] = next.withVersion(stored[0].version() + 1);
                return stored[0];
            }
        };
        QuarantineRecord[] record = {ReplayFakes.record(JOB, then)};
        QuarantineStore quarantine = (QuarantineStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "find" -> Optional.of(record[0]);
                    case "updateStatus" -> {
                        QuarantineRecord r = record[0];
                        record[0] = new QuarantineRecord(r.jobId(), r.tenant(), r.jobType(), r.generation(), r.failureClass(), r.reason(),
                                r.attempts(), r.failures(), r.diagnostics(), r.history(), r.firstSeen(), r.lastSeen(), r.quarantinedAt(),
                                r.expiresAt(), r.sourceMessageId(), (QuarantineStatus) args[1], r.replays(), r.receiveCount(),
                                r.deadLetter(), r.triage());
                        yield true;
                    }
                    default -> throw new AssertionError("not expected: " + method.getName());
                });
        AtomicInteger discardsLeftToFail = new AtomicInteger(1);
        KeptPayload[] kept = {new KeptPayload(JOB, 1, "{\"permit\":\"P-1\"}", Map.of(), then.plus(Duration.ofDays(14)))};
        PayloadVault vault = ReplayFakes.vault(key -> Optional.ofNullable(kept[0]), key -> {
            if (discardsLeftToFail.getAndDecrement() > 0) {
                throw new StoreUnavailable("the payload vault", true, new SocketTimeoutException("read timed out"));
            }
            kept[0] = null;
        });
        List<AuditEntry> audit = new CopyOnWriteArrayList<>();
        OperatorActions actions = new OperatorActions(ledger, quarantine, ReplayFakes.tenants(), ReplayFakes.emptyArchive(), vault,
                (body, attributes) -> {
                    throw new AssertionError("nothing is sent");
                }, ReplayFakes.audit(audit), Clock.systemUTC(), new CodeVersion("test"), Configs.defaults().build(), ReplayQuota.NONE);

        ActionOutcome.Resolved first = assertInstanceOf(ActionOutcome.Resolved.class, actions.resolve(JOB, "olga", "duplicate of 9418"));
        assertNotNull(first.unfinished(), "the answer says the clean-up is not finished");
        assertTrue(audit.get(0).detail().contains("tried again in the background"), audit.get(0).detail());
        assertEquals(QuarantineStatus.RESOLVED, record[0].status(), "the job no longer counts as quarantined");

        ActionOutcome view = actions.payload(JOB, "olga", "what was it");
        assertEquals(Refusal.NOT_QUARANTINED, assertInstanceOf(ActionOutcome.Refused.class, view,
                "a payload kept past its job's resolve is shown to no one: " + view).refusal());

        // The console offers no resolve of a resolved job: the discard is tried again in the background.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> kept[0] == null);
        ActionOutcome.Resolved again = assertInstanceOf(ActionOutcome.Resolved.class, actions.resolve(JOB, "olga", "duplicate of 9418"));
        assertEquals(null, again.unfinished(), "a resolve again finds nothing left to discard");
        assertEquals(QuarantineStatus.RESOLVED, record[0].status());
    }
}

package io.poisonguard.replay;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.config.Configs;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replay or a resolve whose move of the ledger got no answer (a timeout after DynamoDB took the write) threw: the operator
 * got a bare 503, and nothing in the audit trail said the job may have moved: REPLAYING with nothing sent, or RESOLVED with
 * its clean-up not done. Both are now answered as refused (UNAVAILABLE, still 503), audited, saying what may have happened and
 * what finishes it.
 */
class LostLedgerAnswerTest {
    private static final JobKey JOB = JobKey.of("acme", "job-1");

    /** A ledger whose writes land but whose answers are lost, and an audit trail, around the operator actions. */
    private static final class Rig {
        final List<AuditEntry> audit = new CopyOnWriteArrayList<>();
        LedgerRecord stored;
        /** The statuses the record was put back to. */
        final List<String> putBack = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** Writes after this one land and are answered again. */
        int failTo = Integer.MAX_VALUE;
        final OperatorActions actions;

        Rig(boolean landed) {
            this(landed, 1, true, Instant.now().minus(Duration.ofHours(1)), null, null);
        }

        /** Writes from the {@code failFrom}-th on are not answered; before it they land and are answered. */
        Rig(boolean landed, int failFrom, boolean withRecord, Instant then, PayloadVault vault, PayloadArchive archive) {
            stored = LedgerRecord.fresh(JOB.jobId(), JOB.tenant(), "permit-report", 1, then).moveTo(JobState.ACTIVE, then)
                    .moveTo(JobState.QUARANTINED, then);
            LedgerStore ledger = new LedgerStore() {
                @Override
                public Optional<LedgerRecord> find(JobKey key) {
                    return Optional.of(stored);
                }

                int writes;

                @Override
                public LedgerRecord write(LedgerRecord next) {
                    if (++writes < failFrom || writes > failTo) {
                        stored = next.withVersion(stored.version() + 1);
                        return stored;
                    }
                    if (landed) {
                        stored = next.withVersion(stored.version() + 1);
                    }
                    throw new StoreUnavailable(StoreUnavailable.LEDGER, landed, new SocketTimeoutException("read timed out"));
                }
            };
            QuarantineRecord record = new QuarantineRecord(JOB.jobId(), JOB.tenant(), "permit-report", 1, FailureClass.PERMANENT,
                    "PERMANENT limit reached", 1, Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null),
                    List.of(), then, then, then, then.plus(Duration.ofDays(14)), "m-1", QuarantineStatus.QUARANTINED, List.of(), null,
                    DeadLetterCopy.sent("d-1"), null);
            QuarantineStore quarantine = (QuarantineStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[]{QuarantineStore.class}, (proxy, method, args) -> {
                        if (method.getName().equals("find")) {
                            return withRecord ? Optional.of(record) : Optional.empty();
                        }
                        if (method.getName().equals("updateStatus")) {
                            return true;
                        }
                        if (method.getName().equals("recordReplayOutcome")) {
                            putBack.add(String.valueOf(args[2]));
                            return null;
                        }
                        throw new AssertionError("nothing past the ledger's move may run when it was not answered: " + method.getName());
                    });
            actions = new OperatorActions(ledger, quarantine, ReplayFakes.tenants(), archive, vault, null, ReplayFakes.audit(audit), Clock.systemUTC(), new CodeVersion("test"),
                    Configs.defaults().build(), ReplayQuota.NONE);
        }
    }

    @Test
    void aReplayWhoseMoveToReplayingWasNotAnsweredIsAuditedSayingItMayHaveLanded() {
        Rig rig = new Rig(true);

        ActionOutcome outcome = rig.actions.replay(JOB, "olga", "reader shipped");

        ActionOutcome.Refused refused = assertInstanceOf(ActionOutcome.Refused.class, outcome);
        assertEquals(Refusal.UNAVAILABLE, refused.refusal());
        assertEquals(1, rig.audit.size(), "audited");
        AuditEntry entry = rig.audit.get(0);
        assertEquals("REFUSED_UNAVAILABLE", entry.outcome());
        assertTrue(entry.detail().contains("may have") && entry.detail().contains("REPLAYING") && entry.detail().contains("re-issue"),
                entry.detail());
        assertEquals(JobState.REPLAYING, rig.stored.state(), "the write did land");
    }

    @Test
    void aReplayWhoseMoveWasRefusedOutrightSaysNothingChanged() {
        Rig rig = new Rig(false);

        ActionOutcome outcome = rig.actions.replay(JOB, "olga", "reader shipped");

        assertEquals(Refusal.UNAVAILABLE, assertInstanceOf(ActionOutcome.Refused.class, outcome).refusal());
        assertTrue(rig.audit.get(0).detail().contains("nothing changed"), rig.audit.get(0).detail());
    }

    @Test
    void aResolveWhoseMoveWasNotAnsweredIsAuditedSayingAResolveAgainFinishesIt() {
        Rig rig = new Rig(true);

        ActionOutcome outcome = rig.actions.resolve(JOB, "olga", "duplicate of 9418");

        assertEquals(Refusal.UNAVAILABLE, assertInstanceOf(ActionOutcome.Refused.class, outcome).refusal());
        AuditEntry entry = rig.audit.get(0);
        assertEquals("REFUSED_UNAVAILABLE", entry.outcome());
        assertTrue(entry.detail().contains("may have") && entry.detail().contains("resolve it again"), entry.detail());
    }

    /** A replay of a job whose record is past its retention concludes UNRECOVERABLE; its move of the ledger went unanswered. */
    @Test
    void aConclusionOfUnrecoverableWhoseMoveWasNotAnsweredIsStillAnsweredAndAudited() {
        Rig rig = new Rig(true, 1, false, Instant.now().minus(Duration.ofDays(400)), null, null);

        ActionOutcome outcome = rig.actions.replay(JOB, "olga", "reader shipped");

        assertInstanceOf(ActionOutcome.Unrecoverable.class, outcome);
        assertEquals(List.of("UNRECOVERABLE"), rig.audit.stream().map(AuditEntry::outcome).toList());
    }

    /**
     * A replay that found no payload anywhere concludes UNRECOVERABLE; that move landed unanswered. It was then "put back",
     * which conflicted with the move, and audited as "stays REPLAYING": the job was UNRECOVERABLE.
     */
    @Test
    void aConclusionAfterAScanWhoseMoveWasNotAnsweredIsNotAuditedAsStillReplaying() {
        Rig rig = new Rig(true, 2, true, Instant.now().minus(Duration.ofHours(1)), ReplayFakes.vault(key -> Optional.empty()),
                ReplayFakes.emptyArchive());

        ActionOutcome outcome = rig.actions.replay(JOB, "olga", "reader shipped");

        assertEquals(Refusal.UNAVAILABLE, assertInstanceOf(ActionOutcome.Refused.class, outcome).refusal());
        assertEquals(JobState.UNRECOVERABLE, rig.stored.state(), "the conclusion did land");
        assertEquals(List.of(), rig.putBack, "the record of a job concluded UNRECOVERABLE is not put back to QUARANTINED");
        String detail = rig.audit.get(rig.audit.size() - 1).detail();
        assertTrue(detail.contains("UNRECOVERABLE") && !detail.contains("stays REPLAYING until"), detail);
    }

    /**
     * The conclusion UNRECOVERABLE was refused outright (a throttle: it did not land). The job was left REPLAYING with nothing
     * anywhere to send, which every later replay answered "its copy is on the main queue, wait", until its record expired. It
     * now goes back to QUARANTINED, and the next replay concludes again.
     */
    @Test
    void aConclusionThatDidNotLandPutsTheJobBack() {
        Rig rig = new Rig(false, 2, true, Instant.now().minus(Duration.ofHours(1)), ReplayFakes.vault(key -> Optional.empty()),
                ReplayFakes.emptyArchive());
        rig.failTo = 2;

        ActionOutcome outcome = rig.actions.replay(JOB, "olga", "reader shipped");

        assertEquals(Refusal.UNAVAILABLE, assertInstanceOf(ActionOutcome.Refused.class, outcome).refusal());
        assertEquals(JobState.QUARANTINED, rig.stored.state(), "put back");
        assertEquals(List.of("QUARANTINED"), rig.putBack);
    }
}

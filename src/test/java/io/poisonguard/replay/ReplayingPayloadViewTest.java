package io.poisonguard.replay;

import io.poisonguard.audit.AuditEntry;
import io.poisonguard.config.Configs;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replay from the vault sent the payload back to the main queue, discarded the vault entry and swept the dead-letter
 * copies; the ledger says REPLAYING until a worker takes the copy. A payload view then found nothing in the DLQ and answered
 * 410 UNRECOVERABLE ("no dead-letter copy is left"), audited so, while the payload was on its way on the main queue.
 */
class ReplayingPayloadViewTest {
    private static final JobKey JOB = JobKey.of("acme", "job-1");

    @Test
    void aViewOfAJobWhoseReplayIsUnderWayAndWhoseCopiesAreGoneIsNotConcludedUnrecoverable() {
        Instant then = Instant.now().minus(Duration.ofMinutes(5));
        LedgerRecord replaying = LedgerRecord.fresh(JOB.jobId(), JOB.tenant(), "permit-report", 1, then).moveTo(JobState.ACTIVE, then)
                .moveTo(JobState.QUARANTINED, then).replayed(then);
        LedgerStore ledger = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                return Optional.of(replaying);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                throw new AssertionError("a view writes nothing");
            }
        };
        List<AuditEntry> audit = new CopyOnWriteArrayList<>();
        OperatorActions actions = new OperatorActions(ledger, ReplayFakes.quarantine(key -> Optional.of(ReplayFakes.record(JOB, then))),
                ReplayFakes.tenants(), ReplayFakes.emptyArchive(), ReplayFakes.vault(key -> Optional.empty()), (body, attributes) -> {
                    throw new AssertionError("nothing is sent");
                }, ReplayFakes.audit(audit), Clock.systemUTC(), new CodeVersion("test"), Configs.defaults().build(), ReplayQuota.NONE);

        ActionOutcome view = actions.payload(JOB, "olga", "what was it");

        ActionOutcome.Refused refused = assertInstanceOf(ActionOutcome.Refused.class, view, view.toString());
        assertEquals(409, refused.refusal().status());
        assertTrue(refused.detail().contains("main queue"), refused.detail());
        assertEquals(List.of("REFUSED_" + refused.refusal().name()), audit.stream().map(AuditEntry::outcome).toList());
    }
}

package io.poisonguard.replay;

import io.poisonguard.audit.AuditEntry;
import io.poisonguard.config.Configs;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.AbortedException;

import java.lang.reflect.Proxy;
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
 * The thread of a replay is interrupted while it sends (Quarkus interrupts its request threads at shutdown, during a rolling
 * deploy). The AWS SDK, seeing the interrupt, fails every later call on that thread at once: the put-back of the ledger, the
 * record's status and the audit entry all failed, so the job stayed REPLAYING with nothing sent, the failure was not audited,
 * and the operator was told the audit trail did not answer. The put-back runs with the interrupt set aside, and the thread
 * is interrupted again afterwards.
 */
class InterruptedReplayTest {
    private static final JobKey JOB = JobKey.of("acme", "job-1");

    /** Fails as the SDK does when the calling thread is interrupted. */
    private static void likeTheSdk() {
        if (Thread.currentThread().isInterrupted()) {
            throw AbortedException.builder().message("Thread was interrupted").build();
        }
    }

    private final Instant then = Instant.now().minus(Duration.ofHours(1));
    private final LedgerRecord[] stored = {LedgerRecord.fresh(JOB.jobId(), JOB.tenant(), "permit-report", 1, then)
            .moveTo(JobState.ACTIVE, then).moveTo(JobState.QUARANTINED, then)};
    private final List<String> recordStatuses = new CopyOnWriteArrayList<>();

    /** The operator actions over stores that fail as the SDK does on an interrupted thread, replaying through {@code sender}. */
    private OperatorActions rig(ReplaySender sender, List<AuditEntry> audit) {
        LedgerStore ledger = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                likeTheSdk();
                return Optional.of(stored[0]);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                likeTheSdk();
                stored[0] = next.withVersion(stored[0].version() + 1);
                return stored[0];
            }
        };
        QuarantineStore quarantine = (QuarantineStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> {
                    likeTheSdk();
                    return switch (method.getName()) {
                        case "find" -> Optional.of(ReplayFakes.record(JOB, then));
                        case "updateStatus" -> true;
                        case "recordReplayOutcome" -> {
                            recordStatuses.add(String.valueOf(args[2]));
                            yield null;
                        }
                        default -> throw new AssertionError("not expected: " + method.getName());
                    };
                });
        io.poisonguard.audit.AuditLog trail = ReplayFakes.audit(audit);
        io.poisonguard.audit.AuditLog sdkLikeTrail = new io.poisonguard.audit.AuditLog() {
            @Override
            public void append(AuditEntry entry) {
                likeTheSdk();
                trail.append(entry);
            }

            @Override
            public List<AuditEntry> forJob(String jobId, java.util.function.Predicate<AuditEntry> keep, int limit) {
                return trail.forJob(jobId, keep, limit);
            }

            @Override
            public List<AuditEntry> forTenantsJob(java.util.Collection<String> tenants, String jobId, int limit) {
                return trail.forTenantsJob(tenants, jobId, limit);
            }

            @Override
            public io.poisonguard.audit.AuditPage recent(Optional<String> tenant, int limit, Optional<String> cursor) {
                return trail.recent(tenant, limit, cursor);
            }
        };
        PayloadVault vault = ReplayFakes.vault(key -> {
            likeTheSdk();
            return Optional.of(new KeptPayload(key, 1, "{}", Map.of(), then.plus(Duration.ofDays(14))));
        }, key -> likeTheSdk());
        return new OperatorActions(ledger, quarantine, ReplayFakes.tenants(), ReplayFakes.emptyArchive(), vault, sender, sdkLikeTrail,
                Clock.systemUTC(), new CodeVersion("test"), Configs.defaults().build(), ReplayQuota.NONE);
    }

    /** What a replay answered, and whether its thread was interrupted after (cleared here, so the test's thread goes on clean). */
    private record Replayed(ActionOutcome outcome, boolean interruptedAfter) {
    }

    private static Replayed replay(OperatorActions actions) {
        try {
            ActionOutcome outcome = actions.replay(JOB, "olga", "reader shipped");
            return new Replayed(outcome, Thread.interrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aReplayInterruptedWhileItSendsPutsTheJobBackAuditsItAndLeavesTheThreadInterrupted() {
        ReplaySender interruptedWhileSending = (body, attributes) -> {
            Thread.currentThread().interrupt();
            likeTheSdk();
        };
        List<AuditEntry> audit = new CopyOnWriteArrayList<>();
        OperatorActions actions = rig(interruptedWhileSending, audit);

        Replayed replayed = replay(actions);
        ActionOutcome outcome = replayed.outcome();

        assertEquals(Refusal.SEND_FAILED, assertInstanceOf(ActionOutcome.Refused.class, outcome).refusal(), outcome.toString());
        assertEquals(JobState.QUARANTINED, stored[0].state(), "the job is put back, not left REPLAYING with nothing sent");
        assertEquals(List.of("QUARANTINED"), recordStatuses, "its record too");
        assertEquals(List.of("REFUSED_SEND_FAILED"), audit.stream().map(AuditEntry::outcome).toList(), "the failure is audited");
        assertTrue(replayed.interruptedAfter(), "the thread's interrupt is kept for its owner");
    }

    /** Interrupted just after the send went through: the replay stands, and its audit entry is written all the same. */
    @Test
    void aReplayInterruptedJustAfterItsSendIsAuditedAsReplayed() {
        List<AuditEntry> audit = new CopyOnWriteArrayList<>();
        ReplaySender sentThenInterrupted = (body, attributes) -> Thread.currentThread().interrupt();
        OperatorActions actions = rig(sentThenInterrupted, audit);

        Replayed replayed = replay(actions);
        ActionOutcome outcome = replayed.outcome();

        assertInstanceOf(ActionOutcome.Replayed.class, outcome, outcome.toString());
        assertEquals(List.of("REPLAYED"), audit.stream().map(AuditEntry::outcome).toList(), "the replay is audited");
        assertTrue(replayed.interruptedAfter(), "the thread's interrupt is kept for its owner");
    }
}

package io.poisonguard.triage;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.Diagnostics;
import io.poisonguard.alerts.Alerts;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.config.Configs;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.observability.Metrics;
import io.poisonguard.owners.Owner;
import io.poisonguard.owners.OwnerMap;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.quarantine.Triage;
import io.poisonguard.replay.CodeVersion;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One record the store cannot update (a real DynamoDB refuses an item grown past 400 KB; a record a bug left unreadable)
 * must not stop the escalation of every record after it, of every tenant and class, nor freeze the overdue gauges.
 */
class EscalationCheckTest {
    static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");

    private static QuarantineRecord overdue(String tenant, String jobId) {
        Instant at = NOW.minus(Duration.ofDays(1));
        LedgerRecord l = LedgerRecord.fresh(jobId, tenant, "permit-report", 1, at).moveTo(JobState.QUARANTINED, at)
                .withQuarantine(FailureClass.PERMANENT, "boom");
        return QuarantineRecord.of(l, new Diagnostics(10, "utf-8", null, null, 3, 0), "m-" + jobId, at, Duration.ofDays(14), List.of(),
                DeadLetterCopy.sent("dlq-" + jobId), Triage.owned("operations", true));
    }

    @Test
    void aRecordWhoseEscalationTheStoreRefusesDoesNotStopTheOthers() {
        List<String> marked = new ArrayList<>();
        List<QuarantineRecord> waiting = List.of(overdue("tenant-a", "too-large"), overdue("tenant-b", "ordinary"));
        QuarantineStore store = (QuarantineStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "fullyEscalated", "partlyEscalated" -> List.of();
                    case "waitingSince" -> args[0] == FailureClass.PERMANENT ? waiting : List.of();
                    case "markEscalated" -> {
                        JobKey key = (JobKey) args[0];
                        if (key.jobId().equals("too-large")) {
                            throw new IllegalStateException("Item size has exceeded the maximum allowed size");
                        }
                        marked.add(key.jobId() + "/" + args[1]);
                        yield true;
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        AuditLog audit = (AuditLog) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{AuditLog.class},
                (proxy, method, args) -> null);
        Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        OwnerMap owners = new OwnerMap(List.of(), new Owner("operations", Set.of(), Set.of(), Duration.ofHours(4), Duration.ofDays(3)));
        EscalationCheck check = new EscalationCheck(store, owners,
                new Alerts(Configs.defaults().build(), new ObjectMapper().findAndRegisterModules(), clock, registry, owners), new Metrics(registry), audit, clock,
                new CodeVersion("test"), registry);

        int escalated = check.check();

        assertEquals(List.of("ordinary/acknowledge"), marked, "the record after the refused one is escalated");
        assertEquals(1, escalated);
        assertEquals(1, check.passes(), "the pass completes");
        assertTrue(registry.get("poison.guard.quarantine.overdue").tag("owner", "operations").tag("stage", "acknowledge").gauge().value() == 2.0,
                "both records are counted overdue (not acknowledged within 4 h)");
    }
}

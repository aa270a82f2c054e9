package io.poisonguard.replay;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.config.Configs;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bulk replay's canary is the first job selected, and only its outcome is read before the rest follow. A selection that
 * named no job type could hold several: a canary of the type whose fix shipped let every job of a type still broken follow
 * it, failing again until the systemic guard stopped consumption for every tenant. A batch now refuses a selection of
 * several job types (naming them) unless one is named; its dry run says so.
 */
class BulkCanaryScopeTest {
    private static QuarantineRecord record(String jobId, String jobType) {
        Instant now = Instant.now();
        return new QuarantineRecord(jobId, "acme", jobType, 1, FailureClass.PERMANENT, "PERMANENT limit reached", 1,
                Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), now, now, now,
                now.plus(Duration.ofDays(14)), "m-" + jobId, QuarantineStatus.QUARANTINED, List.of(), null, DeadLetterCopy.sent("d-" + jobId),
                null);
    }

    private static QuarantineStore listing(List<QuarantineRecord> records) {
        return (QuarantineStore) Proxy.newProxyInstance(BulkCanaryScopeTest.class.getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("list")) {
                        throw new AssertionError("a selection only lists, called " + method.getName());
                    }
                    return new QuarantinePage(records, null);
                });
    }

    @Test
    void aBatchOfSeveralJobTypesWithNoneNamedIsRefusedBeforeAnythingIsReplayed() {
        BulkReplays bulk = new BulkReplays(null, listing(List.of(record("a-1", "permit-report"), record("b-1", "invoice-render"),
                record("a-2", "permit-report"))), null, null, null, Clock.systemUTC(), null, Configs.defaults().build(), Optional::empty);

        BulkReplays.MixedJobTypes refused = assertThrows(BulkReplays.MixedJobTypes.class,
                () -> bulk.start(new BulkRequest("acme", FailureClass.PERMANENT, Optional.empty(), 50, "fixed"), "olga"));

        assertEquals(List.of("invoice-render", "permit-report"), refused.jobTypes());
        assertTrue(refused.getMessage().contains("name one jobType"), refused.getMessage());
    }
}

package io.poisonguard.observability;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.Diagnostics;
import io.poisonguard.dynamodb.DynamoQuarantineStore;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.testing.RecordingDynamo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The quarantine gauges count the jobs waiting in quarantine, whatever the operator listing's read budget: the oldest
 * records of a class are often long replayed (they stay for the retention), and a gauge that read only as many as one
 * listing call may read would say nothing waits while a new quarantine does.
 */
class QuarantineGaugesTest {
    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");
    static RecordingDynamo dynamo;

    @BeforeAll
    static void tables() {
        dynamo = RecordingDynamo.onFreshTables("qg");
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static QuarantineRecord record(String jobId, Instant at, QuarantineStatus status) {
        return new QuarantineRecord(jobId, "acme", "permit-report", 1, FailureClass.PERMANENT, "PERMANENT limit reached", 1,
                Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), at, at, at,
                at.plus(Duration.ofDays(14)), "m-" + jobId, status, List.of(), null, DeadLetterCopy.sent("d-" + jobId), null);
    }

    @Test
    void aJobWaitingBehindMoreReplayedRecordsThanTheListingReadsIsCountedWithItsAge() {
        int budget = 10;
        DynamoQuarantineStore store = new DynamoQuarantineStore(dynamo.client(), dynamo.names().quarantineTable(),
                Clock.fixed(NOW, ZoneOffset.UTC), budget);
        for (int i = 0; i < 12; i++) {
            store.putIfAbsent(record("replayed-" + i, NOW.minus(Duration.ofDays(3)).plusSeconds(i), QuarantineStatus.REPLAYED));
        }
        store.putIfAbsent(record("waiting-1", NOW.minus(Duration.ofHours(2)), QuarantineStatus.QUARANTINED));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        QuarantineGauges gauges = new QuarantineGauges(store, () -> Map.of("jobs", 0L, "dlq", 0L), Clock.fixed(NOW, ZoneOffset.UTC), registry);
        gauges.start();

        gauges.refresh();

        assertEquals(1.0, registry.get("poison.guard.quarantine.records").tag("failure_class", "PERMANENT").gauge().value());
        assertEquals(7200.0, registry.get("poison.guard.quarantine.oldest.age").tag("failure_class", "PERMANENT").gauge().value());
    }
}

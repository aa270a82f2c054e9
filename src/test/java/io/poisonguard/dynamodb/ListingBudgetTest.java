package io.poisonguard.dynamodb;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.config.Names;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, item 8: a narrow listing filter does not read the whole quarantine table in one call. Each call
 * asks DynamoDB for at most the read budget's records, answers what it found (possibly nothing) with a
 * cursor, and following the cursors finds every match.
 */
class ListingBudgetTest {
    static final int BUDGET = 10;
    static final AtomicInteger asked = new AtomicInteger();
    static DynamoDbClient dynamo;
    static DynamoQuarantineStore store;

    @BeforeAll
    static void table() {
        Emulators emulators = Emulators.shared();
        dynamo = EmulatorClients.dynamo(emulators, new ExecutionInterceptor() {
                    @Override
                    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                        if (context.request() instanceof ScanRequest s && s.limit() != null) {
                            asked.addAndGet(s.limit());
                        }
                        if (context.request() instanceof QueryRequest q && q.limit() != null) {
                            asked.addAndGet(q.limit());
                        }
                    }
                });
        Names names = new Names("lb" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        store = new DynamoQuarantineStore(dynamo, names.quarantineTable(), Clock.systemUTC(), BUDGET);
        Instant now = Instant.now();
        for (int i = 0; i < 60; i++) {
            String type = i % 20 == 7 ? "rare-type" : "common-type";
            store.putIfAbsent(new QuarantineRecord("job-" + i, "tenant-a", type, 1, FailureClass.PERMANENT, "PERMANENT limit reached", 1,
                    Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), now, now,
                    now.minusSeconds(i), now.plus(Duration.ofDays(14)), "m-" + i, QuarantineStatus.QUARANTINED, List.of(), null,
                    DeadLetterCopy.sent("d-" + i), null));
        }
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static List<QuarantineRecord> everyPage(Optional<FailureClass> failureClass) {
        List<QuarantineRecord> found = new ArrayList<>();
        Optional<String> cursor = Optional.empty();
        int calls = 0;
        do {
            asked.set(0);
            QuarantinePage page = store.list(new QuarantineQuery(failureClass, Optional.empty(), Optional.of("rare-type"),
                    Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), 50, cursor), Instant.now());
            assertTrue(asked.get() <= BUDGET, "one call asked DynamoDB for " + asked.get() + " records, the budget is " + BUDGET);
            found.addAll(page.items());
            cursor = Optional.ofNullable(page.nextCursor());
            assertTrue(++calls <= 60 / BUDGET + 2, "the listing ends");
        } while (cursor.isPresent());
        assertTrue(calls >= 60 / BUDGET, "a narrow filter over 60 records takes several bounded calls, took " + calls);
        return found;
    }

    @Test
    void aNarrowFilterOverTheWholeTableReadsABoundedNumberPerCallAndFindsEveryMatch() {
        assertEquals(3, everyPage(Optional.empty()).size(), "the scan, in steps");
        assertEquals(3, everyPage(Optional.of(FailureClass.PERMANENT)).size(), "the class index, in steps");
    }
}

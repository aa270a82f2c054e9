package io.poisonguard.dynamodb;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditPage;
import io.poisonguard.config.Names;
import io.poisonguard.replay.BulkReplay;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, item 8: the audit listing reads indexes page by page (by tenant, or by day across tenants), never
 * the whole table; and bulk replays' state is kept in DynamoDB, readable by any instance.
 */
class AuditListingTest {
    static final AtomicInteger scans = new AtomicInteger();
    static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
    static DynamoDbClient dynamo;
    static Names names;
    static DynamoAuditLog audit;

    @BeforeAll
    static void table() {
        Emulators emulators = Emulators.shared();
        dynamo = EmulatorClients.dynamo(emulators, new ExecutionInterceptor() {
                    @Override
                    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                        if (context.request() instanceof ScanRequest) {
                            scans.incrementAndGet();
                        }
                    }
                });
        names = new Names("al" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        audit = new DynamoAuditLog(dynamo, names.auditTable(), Clock.fixed(NOW, ZoneOffset.UTC));
        // 25 entries of tenant-a over the last 5 days, 10 of tenant-b today and 2 days ago, 3 on no tenant.
        for (int i = 0; i < 25; i++) {
            audit.append(entry("a-" + i, "tenant-a", NOW.minus(Duration.ofHours(i * 5L))));
        }
        for (int i = 0; i < 10; i++) {
            audit.append(entry("b-" + i, "tenant-b", NOW.minus(Duration.ofHours(i % 2 == 0 ? 1 : 49))));
        }
        for (int i = 0; i < 3; i++) {
            audit.append(entry("system:consumption", null, NOW.minus(Duration.ofDays(40 + i))));
        }
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    static AuditEntry entry(String job, String tenant, Instant at) {
        return new AuditEntry(job, tenant, at, "olga", AuditAction.REPLAY, "r", "test", 2, 1, "REPLAYED", null);
    }

    /** Every page of a listing, following cursors; no page bigger than the limit. */
    static List<AuditEntry> all(Optional<String> tenant, int limit) {
        List<AuditEntry> out = new ArrayList<>();
        Optional<String> cursor = Optional.empty();
        int pages = 0;
        do {
            AuditPage page = audit.recent(tenant, limit, cursor);
            assertTrue(page.items().size() <= limit, "a page holds at most the limit");
            out.addAll(page.items());
            cursor = Optional.ofNullable(page.nextCursor());
            assertTrue(++pages < 200, "the listing ends");
        } while (cursor.isPresent());
        return out;
    }

    /**
     * A job's view reads its tenant's entries by key, the ones written before keys named the tenant beside them (those
     * filtered by tenant), newest last within the limit; an entry of another tenant under the same id is not among them.
     */
    @Test
    void aTenantsJobReadsItsOwnEntriesOfBothKeyFormatsAndNoOtherTenants() {
        String job = "mixed-" + UUID.randomUUID().toString().substring(0, 6);
        // As the service wrote entries before 2026-12-06: the sort key starts with the instant.
        for (int i = 0; i < 3; i++) {
            Instant at = NOW.minus(Duration.ofDays(3 - i));
            String reason = "old " + i;
            dynamo.putItem(b -> b.tableName(names.auditTable()).item(java.util.Map.of("jobId", Attrs.s(job),
                    "at", Attrs.s(at + "#old" + at.getEpochSecond()), "atMillis", Attrs.millis(at),
                    "day", Attrs.s(at.toString().substring(0, 10)), "tenant", Attrs.s("tenant-a"),
                    "actor", Attrs.s("olga"), "action", Attrs.s("NOTE"), "reason", Attrs.s(reason), "codeVersion", Attrs.s("old"),
                    "outcome", Attrs.s("NOTED"))));
        }
        audit.append(new AuditEntry(job, "tenant-b", NOW.minus(Duration.ofDays(2)), "bob", AuditAction.NOTE, "b's", "test", null, null, "NOTED", null));
        audit.append(new AuditEntry(job, "tenant-a", NOW.minus(Duration.ofHours(1)), "olga", AuditAction.NOTE, "new", "test", null, null, "NOTED", null));
        audit.append(new AuditEntry(job, null, NOW.minus(Duration.ofHours(2)), "root", AuditAction.NOTE, "none's", "test", null, null, "NOTED", null));

        assertEquals(List.of("old 0", "old 1", "old 2", "new"), audit.forTenantsJob(List.of("tenant-a"), job, 10).stream().map(AuditEntry::reason).toList());
        assertEquals(List.of("old 2", "new"), audit.forTenantsJob(List.of("tenant-a"), job, 2).stream().map(AuditEntry::reason).toList(), "the newest two");
        assertEquals(List.of("b's"), audit.forTenantsJob(List.of("tenant-b"), job, 10).stream().map(AuditEntry::reason).toList());
        assertEquals(List.of("none's"), audit.forTenantsJob(java.util.Collections.singletonList(null), job, 10).stream().map(AuditEntry::reason).toList());
        assertEquals(List.of("old 0", "old 1", "b's", "old 2", "new"),
                audit.forTenantsJob(List.of("tenant-a", "tenant-b"), job, 10).stream().map(AuditEntry::reason).toList(), "two tenants' at once");
        assertEquals(List.of("old 0", "old 1", "b's", "old 2", "none's", "new"), audit.forJob(job, 10).stream().map(AuditEntry::reason).toList(),
                "every tenant's, oldest first");
    }

    /**
     * Across tenants the newest entries are the newest whatever tenant wrote them: keys sort by tenant first, and a
     * tenant whose name sorts last with over a thousand entries under the id must not hide another's newest one.
     */
    @Test
    void theViewAcrossTenantsShowsTheNewestEntriesWhicheverTenantWroteThem() {
        String job = "crowd-" + UUID.randomUUID().toString().substring(0, 6);
        for (int i = 0; i < 1_050; i++) {
            audit.append(new AuditEntry(job, "zeta", NOW.minus(Duration.ofHours(3)).plusSeconds(i), "zed", AuditAction.NOTE, "z" + i, "test",
                    null, null, "NOTED", null));
        }
        audit.append(new AuditEntry(job, "acme", NOW.minus(Duration.ofHours(1)), "al", AuditAction.NOTE, "acme's newest", "test", null, null, "NOTED", null));
        audit.append(new AuditEntry(job, null, NOW.minus(Duration.ofHours(2)), "root", AuditAction.NOTE, "none's", "test", null, null, "NOTED", null));

        assertEquals(List.of("z1048", "z1049", "none's", "acme's newest"), audit.forJob(job, 4).stream().map(AuditEntry::reason).toList());
        assertEquals(List.of("acme's newest"), audit.forTenantsJob(List.of("acme"), job, 4).stream().map(AuditEntry::reason).toList());
    }

    @Test
    void oneTenantsEntriesPageNewestFirstWithoutAScan() {
        int before = scans.get();
        List<AuditEntry> a = all(Optional.of("tenant-a"), 7);
        assertEquals(25, a.size());
        assertTrue(a.stream().allMatch(e -> "tenant-a".equals(e.tenant())));
        for (int i = 1; i < a.size(); i++) {
            assertTrue(!a.get(i).at().isAfter(a.get(i - 1).at()), "newest first");
        }
        assertEquals(before, scans.get(), "no Scan request");
    }

    @Test
    void theListingAcrossTenantsWalksBackDayByDayWithoutAScan() {
        int before = scans.get();
        List<AuditEntry> every = all(Optional.empty(), 6);
        assertEquals(38, every.size(), "every entry, the ones 40 days old included");
        assertEquals(38, every.stream().map(e -> e.jobId() + e.at()).distinct().count(), "no entry twice");
        for (int i = 1; i < every.size(); i++) {
            assertTrue(!every.get(i).at().isAfter(every.get(i - 1).at()), "newest first");
        }
        assertNull(every.get(every.size() - 1).tenant(), "entries on no tenant read back as such");
        assertEquals(before, scans.get(), "no Scan request");
    }

    @Test
    void aForgedCursorIsRefusedAsInvalid() {
        String real = audit.recent(Optional.empty(), 2, Optional.empty()).nextCursor();
        String forged = java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString("~day=S:1999-01-01\u0000".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String wrongKey = java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString("~day=S:2026-12-02\u0000nope=S:x\u0000".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertTrue(real != null);
        for (String bad : List.of(forged, wrongKey, "%%%")) {
            assertThrows(IllegalArgumentException.class, () -> audit.recent(Optional.empty(), 2, Optional.of(bad)), bad);
        }
    }

    @Test
    void aBulkReplaysStateIsKeptAndReadBackWhole() {
        DynamoBulkReplayStore store = new DynamoBulkReplayStore(dynamo, names.bulkReplaysTable(), Clock.fixed(NOW, ZoneOffset.UTC));
        BulkReplay b = new BulkReplay("b-1", "olga", "reader fixed", "tenant-a", FailureClass.PERMANENT, 3, BulkReplay.Status.WIDENING, "a-1",
                "SUCCEEDED", List.of(new BulkReplay.Step("a-1", "REPLAYED", "generation 2"), new BulkReplay.Step("a-2", "REFUSED_CONFLICT", null)),
                NOW.minusSeconds(60), NOW, null, "3 jobs selected", 0, 0);
        store.put(b);
        assertEquals(Optional.of(b), store.find("b-1"));
        assertEquals(Optional.empty(), store.find("b-2"));
        DynamoBulkReplayStore later = new DynamoBulkReplayStore(dynamo, names.bulkReplaysTable(),
                Clock.fixed(NOW.plus(DynamoBulkReplayStore.KEPT), ZoneOffset.UTC));
        assertEquals(Optional.empty(), later.find("b-1"), "past its retention a batch reads as gone");
    }

    @Test
    void aLargeBatchsStateFitsItsItemAndKeepsEveryJobThatWasNotReplayed() {
        DynamoBulkReplayStore store = new DynamoBulkReplayStore(dynamo, names.bulkReplaysTable(), Clock.fixed(NOW, ZoneOffset.UTC));
        List<BulkReplay.Step> steps = new java.util.ArrayList<>();
        for (int i = 0; i < 7000; i++) {
            steps.add(new BulkReplay.Step(java.util.UUID.randomUUID().toString(), "REPLAYED", "generation 2"));
            if (i % 1000 == 500) {
                steps.add(new BulkReplay.Step("refused-" + i, "REFUSED_TENANT_NOT_AUTHORIZED", "tenant 'tenant-a' is SUSPENDED"));
            }
        }
        BulkReplay b = new BulkReplay("b-big", "olga", "reader fixed", "tenant-a", FailureClass.PERMANENT, steps.size(),
                BulkReplay.Status.COMPLETED, steps.get(0).jobId(), "SUCCEEDED", steps, NOW.minusSeconds(600), NOW, NOW, "done", 0, 0);

        store.put(b);

        BulkReplay read = store.find("b-big").orElseThrow();
        assertEquals(BulkReplay.Status.COMPLETED, read.status());
        assertEquals(steps.stream().filter(st -> !st.outcome().equals("REPLAYED")).toList(),
                read.outcomes().stream().filter(st -> !st.outcome().equals("REPLAYED")).toList(), "every job not replayed is named");
        assertEquals(steps.size(), read.outcomes().size() + read.stepsOmitted(), "the steps left out are counted");
        assertEquals(0, read.notReplayedOmitted());
    }

    @Test
    void stepsNotReplayedThatDoNotAllFitAreCountedApartFromTheReplayedOnes() {
        // An outage during the widening: most steps refused with a long detail, more than the item can name.
        List<BulkReplay.Step> steps = new java.util.ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            steps.add(new BulkReplay.Step("job-" + i, i % 10 == 0 ? "REPLAYED" : "REFUSED_UNAVAILABLE", i % 10 == 0 ? "generation 2" : "d".repeat(200)));
        }
        BulkReplay b = new BulkReplay("b-outage", "olga", "reader fixed", "tenant-a", FailureClass.PERMANENT, steps.size(),
                BulkReplay.Status.COMPLETED, "job-0", "SUCCEEDED", steps, NOW.minusSeconds(600), NOW, NOW, "200 of 2000 jobs replayed", 0, 0);

        BulkReplay fitted = b.fittedTo(300_000);

        long replayedNamed = fitted.outcomes().stream().filter(st -> st.outcome().equals("REPLAYED")).count();
        long othersNamed = fitted.outcomes().size() - replayedNamed;
        assertEquals(200, replayedNamed + fitted.stepsOmitted(), "replayed, named or counted");
        assertEquals(1800, othersNamed + fitted.notReplayedOmitted(), "not replayed, named or counted, never counted as replayed");
        assertTrue(fitted.notReplayedOmitted() > 0, "more than fit");
    }
}

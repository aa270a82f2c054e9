package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The compact ledger item: every record reads back as it was written, whatever its text fields hold, it holds
 * no attribute besides the key, version, expiry, history and record, and the same record always writes the
 * same record text (a write sent again is recognised by that text).
 */
class CompactLedgerItemProperties {
    private final HistoryCodecProperties histories = new HistoryCodecProperties();

    /**
     * The record text's fields are this release's and no more: a field added inside the record would be dropped by an
     * older release's next write of the job (it rewrites the record whole, skipping what it does not know), so a later
     * release adds what it needs as an attribute of its own. Changing this list is that mistake, unless the release
     * also stops older ones from writing compact items.
     */
    @net.jqwik.api.Example
    void theRecordTextHoldsOnlyTheFieldsEveryReleaseThatReadsItKnows() throws Exception {
        Instant now = Instant.ofEpochMilli(1_700_000_000_000L);
        LedgerRecord full = LedgerRecord.fresh("job-f", "acme", "permit-report", 2, now).withAttempt(3)
                .withFailureCounted(FailureClass.TRANSIENT).withEffects(Map.of("completion-notice", 3))
                .moveTo(JobState.QUARANTINED, now).withQuarantine(FailureClass.PERMANENT, "bad input").withLease("w1", now.plusSeconds(60));
        Set<String> names = new java.util.TreeSet<>();
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(CompactLedgerItem.fields(full)).fieldNames().forEachRemaining(names::add);
        assertEquals(new java.util.TreeSet<>(Set.of("tenant", "jobType", "state", "generation", "attempt", "failures", "effects", "leaseOwner",
                "leaseUntil", "firstSeen", "updatedAt", "quarantineClass", "quarantineReason")), names,
                "a new ledger field belongs in an attribute of its own, not inside the compact record (see CompactLedgerItem)");
    }

    @Property(tries = 300)
    void everyRecordReadsBackAsWritten(@ForAll("records") LedgerRecord r) {
        Map<String, AttributeValue> item = new HashMap<>(DynamoLedgerStore.encodeCompact(r));
        item.put(DynamoLedgerStore.KEY, AttributeValue.fromS(JobKey.of(r).storage()));
        assertEquals(r, DynamoLedgerStore.decode(item));
        Set<String> allowed = Set.of(DynamoLedgerStore.KEY, "version", DynamoLedgerStore.TTL, "history", CompactLedgerItem.RECORD);
        assertEquals(Set.of(), item.keySet().stream().filter(k -> !allowed.contains(k)).collect(java.util.stream.Collectors.toSet()));
    }

    @Property(tries = 100)
    void theSameRecordAlwaysWritesTheSameText(@ForAll("records") LedgerRecord r) {
        assertEquals(CompactLedgerItem.fields(r), CompactLedgerItem.fields(new LedgerRecord(r.jobId(), r.tenant(), r.jobType(), r.state(),
                r.generation(), r.attempt(), new HashMap<>(r.failures()), r.leaseOwner(), r.leaseUntil(), r.history(), r.firstSeen(),
                r.updatedAt(), r.quarantineClass(), r.quarantineReason(), r.version(), r.expiresAt(), new HashMap<>(r.effects()))));
    }

    @Provide
    Arbitrary<LedgerRecord> records() {
        Arbitrary<String> text = Arbitraries.strings().all().ofMaxLength(40).injectNull(0.3);
        Arbitrary<Instant> at = Arbitraries.longs().between(0, 4_102_444_800_000L).map(Instant::ofEpochMilli);
        Arbitrary<Instant> seconds = Arbitraries.longs().between(0, 4_102_444_800L).map(Instant::ofEpochSecond);
        Arbitrary<String> tenant = Arbitraries.strings().withChars("abcXYZ019._-").ofMinLength(1).ofMaxLength(12)
                .filter(JobKey::validTenant).injectNull(0.2);
        Arbitrary<Map<FailureClass, Integer>> failures = Arbitraries.maps(Arbitraries.of(FailureClass.class),
                Arbitraries.integers().between(1, 99)).ofMaxSize(4);
        Arbitrary<Map<String, Integer>> effects = Arbitraries.maps(Arbitraries.strings().all().ofMinLength(1).ofMaxLength(20),
                Arbitraries.integers().between(1, 99)).ofMaxSize(3);
        Arbitrary<List<AttemptEntry>> history = histories.entries().list().ofMaxSize(4);
        Arbitrary<LedgerRecord> head = Combinators.combine(
                Arbitraries.strings().all().ofMinLength(1).ofMaxLength(30),
                tenant,
                text,
                Arbitraries.of(JobState.class).injectNull(0.1),
                Arbitraries.integers().between(0, 50),
                Arbitraries.integers().between(0, 1000),
                failures,
                text).as((jobId, t, jobType, state, generation, attempt, f, leaseOwner) ->
                new LedgerRecord(jobId, t, jobType, state, generation, attempt, f, leaseOwner, null, List.of(), null, null, null, null, 0, null, Map.of()));
        return Combinators.combine(head, at.injectNull(0.4), history, at, at, Arbitraries.of(FailureClass.class).injectNull(0.6), text,
                Arbitraries.longs().between(0, 1_000_000)).as((h, leaseUntil, hist, firstSeen, updatedAt, qc, reason, version) ->
                        new LedgerRecord(h.jobId(), h.tenant(), h.jobType(), h.state(), h.generation(), h.attempt(), h.failures(),
                                h.leaseOwner(), leaseUntil, hist, firstSeen, updatedAt, qc, reason, version, null, Map.of()))
                .flatMap(r -> Combinators.combine(seconds.injectNull(0.5), effects).as((expiry, e) -> new LedgerRecord(r.jobId(),
                        r.tenant(), r.jobType(), r.state(), r.generation(), r.attempt(), r.failures(), r.leaseOwner(), r.leaseUntil(),
                        r.history(), r.firstSeen(), r.updatedAt(), r.quarantineClass(), r.quarantineReason(), r.version(), expiry, e)));
    }
}

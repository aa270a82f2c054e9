package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The attempt history's stored form: one JSON string per entry. Every entry reads back as it was written,
 * whatever its text fields hold, and entries stored as maps (the earlier format) read back the same.
 */
class HistoryCodecProperties {

    @Property(tries = 300)
    void everyEntryReadsBackAsWritten(@ForAll("histories") @Size(max = 6) List<AttemptEntry> history) {
        AttributeValue stored = HistoryCodec.encode(history);
        for (AttributeValue e : stored.l()) {
            assertNotNull(e.s(), "an entry is stored as one string");
        }
        assertEquals(history, HistoryCodec.decode(stored));
    }

    @Property(tries = 300)
    void entriesStoredAsMapsStillRead(@ForAll("histories") @Size(max = 6) List<AttemptEntry> history) {
        AttributeValue old = AttributeValue.fromL(history.stream().map(HistoryCodec::mapEntry).toList());
        assertEquals(history, HistoryCodec.decode(old));
    }

    @Property(tries = 100)
    void theSameEntryAlwaysEncodesTheSame(@ForAll("entries") AttemptEntry entry) {
        // The ledger's write token digests what it writes: a write sent again must digest the same.
        assertEquals(HistoryCodec.entry(entry), HistoryCodec.entry(entry));
    }

    @Provide
    Arbitrary<List<AttemptEntry>> histories() {
        return entries().list();
    }

    @Provide
    Arbitrary<AttemptEntry> entries() {
        Arbitrary<String> text = Arbitraries.strings().all().ofMaxLength(40).injectNull(0.3);
        Arbitrary<Instant> at = Arbitraries.longs().between(0, 4_102_444_800_000L).map(Instant::ofEpochMilli);
        Arbitrary<FailureClass> failureClass = Arbitraries.of(FailureClass.class).injectNull(0.4);
        Arbitrary<Duration> delay = Arbitraries.longs().between(0, 86_400_000L).map(Duration::ofMillis).injectNull(0.5);
        Arbitrary<AttemptEntry> head = Combinators.combine(
                Arbitraries.integers().between(1, 1000),
                Arbitraries.integers().between(1, 50),
                Arbitraries.of(AttemptOutcome.class),
                failureClass,
                text,
                text.filter(s -> s == null || !s.isEmpty()),
                at,
                at.injectNull(0.3)).as((number, generation, outcome, fc, errorType, message, started, ended) ->
                new AttemptEntry(number, generation, outcome, fc, errorType, message, started, ended, null, null, false, 0));
        return Combinators.combine(head, text, delay, Arbitraries.of(true, false), Arbitraries.integers().between(0, 64))
                .as((h, worker, retry, isolated, others) -> new AttemptEntry(h.number(), h.generation(), h.outcome(), h.failureClass(),
                        h.errorType(), h.message(), h.startedAt(), h.endedAt(), worker, retry, isolated, others));
    }
}

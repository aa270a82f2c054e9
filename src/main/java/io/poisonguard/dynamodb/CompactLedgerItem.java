package io.poisonguard.dynamodb;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The ledger item's compact format: besides the key, only what DynamoDB itself must see stays an attribute
 * of its own ({@code version}, which every write's condition reads; {@code expiresAt}, the TTL attribute;
 * {@code history}, a list so a long one grows by {@code list_append} instead of being sent again), and the
 * rest of the record is one string, a small JSON object in {@link #RECORD}. The job's fields are written and
 * read whole and never queried by DynamoDB, and every attribute is work for the table on every write (the
 * emulator's profile put poison-guard's extra cost over a two-attribute item in per-attribute type checks,
 * number parsing and name resolution); this item has four or five attributes where the attribute format has
 * thirteen to fifteen, two of them numbers where it has seven or eight.
 *
 * <p>Reading skips fields it does not know, but a write rewrites the record whole, so a field a later release
 * added inside it would be lost when this release writes the job: a later release that needs a new field adds it
 * as an attribute of its own, which this release's writes keep (an item with an attribute unknown here is updated,
 * never put whole).
 */
final class CompactLedgerItem {
    /** The attribute holding the record's fields as JSON; an item that has it is in this format. */
    static final String RECORD = "record";

    /** The item's attributes besides the key, in a fixed order. */
    static final List<String> ATTRIBUTES = List.of("version", DynamoLedgerStore.TTL, "history", RECORD);

    private static final JsonFactory JSON = new JsonFactory();

    private CompactLedgerItem() {
    }

    static boolean holds(Map<String, ?> item) {
        return item.containsKey(RECORD);
    }

    /** The record's fields besides its key, version, expiry and history, as JSON in a fixed field order. */
    static String fields(LedgerRecord r) {
        StringWriter out = new StringWriter(192);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            text(g, "tenant", r.tenant());
            text(g, "jobType", r.jobType());
            text(g, "state", r.state() == null ? null : r.state().name());
            g.writeNumberField("generation", r.generation());
            g.writeNumberField("attempt", r.attempt());
            if (!r.failures().isEmpty()) {
                g.writeObjectFieldStart("failures");
                // EnumMap order: the same failures always write the same text.
                for (Map.Entry<FailureClass, Integer> f : new EnumMap<>(r.failures()).entrySet()) {
                    g.writeNumberField(f.getKey().name(), f.getValue());
                }
                g.writeEndObject();
            }
            if (!r.effects().isEmpty()) {
                g.writeObjectFieldStart("effects");
                for (Map.Entry<String, Integer> e : new java.util.TreeMap<>(r.effects()).entrySet()) {
                    g.writeNumberField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            text(g, "leaseOwner", r.leaseOwner());
            millis(g, "leaseUntil", r.leaseUntil());
            millis(g, "firstSeen", r.firstSeen());
            millis(g, "updatedAt", r.updatedAt());
            text(g, "quarantineClass", r.quarantineClass() == null ? null : r.quarantineClass().name());
            text(g, "quarantineReason", r.quarantineReason());
            g.writeEndObject();
        } catch (IOException impossible) {
            throw new UncheckedIOException(impossible);
        }
        return out.toString();
    }

    private static void text(JsonGenerator g, String name, String value) throws IOException {
        if (value != null) {
            g.writeStringField(name, value);
        }
    }

    private static void millis(JsonGenerator g, String name, Instant value) throws IOException {
        if (value != null) {
            g.writeNumberField(name, value.toEpochMilli());
        }
    }

    /** The fields {@link #fields} wrote, read back; unknown fields (a newer release's) are skipped. */
    static Fields parse(String json) {
        Fields f = new Fields();
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalStateException("a ledger item's record is not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (value == JsonToken.VALUE_NULL) {
                    continue;
                }
                switch (name) {
                    case "tenant" -> f.tenant = p.getText();
                    case "jobType" -> f.jobType = p.getText();
                    case "state" -> f.state = JobState.valueOf(p.getText());
                    case "generation" -> f.generation = p.getIntValue();
                    case "attempt" -> f.attempt = p.getIntValue();
                    case "failures" -> {
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String c = p.currentName();
                            p.nextToken();
                            f.failures.put(FailureClass.valueOf(c), p.getIntValue());
                        }
                    }
                    case "effects" -> {
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String e = p.currentName();
                            p.nextToken();
                            f.effects.put(e, p.getIntValue());
                        }
                    }
                    case "leaseOwner" -> f.leaseOwner = p.getText();
                    case "leaseUntil" -> f.leaseUntil = Instant.ofEpochMilli(p.getLongValue());
                    case "firstSeen" -> f.firstSeen = Instant.ofEpochMilli(p.getLongValue());
                    case "updatedAt" -> f.updatedAt = Instant.ofEpochMilli(p.getLongValue());
                    case "quarantineClass" -> f.quarantineClass = FailureClass.valueOf(p.getText());
                    case "quarantineReason" -> f.quarantineReason = p.getText();
                    default -> p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("a ledger item's record is not JSON", e);
        }
        return f;
    }

    /** A record's fields as {@link #parse} reads them. */
    static final class Fields {
        String tenant;
        String jobType;
        JobState state;
        int generation;
        int attempt;
        final Map<FailureClass, Integer> failures = new EnumMap<>(FailureClass.class);
        final Map<String, Integer> effects = new HashMap<>();
        String leaseOwner;
        Instant leaseUntil;
        Instant firstSeen;
        Instant updatedAt;
        FailureClass quarantineClass;
        String quarantineReason;
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Attempt history, shared by the ledger and quarantine tables: a DynamoDB list with one string per attempt,
 * a small JSON object with the same field names the API shows ({@code {"number":1,"generation":1,"outcome":"RUNNING",...}}).
 * One string per entry rather than one map: an entry is written and read whole, never queried by field, and a
 * string is one attribute value to marshal and store where a map is a dozen. Entries written as maps (before
 * this format) are still read.
 */
final class HistoryCodec {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HistoryCodec() {
    }

    static AttributeValue encode(List<AttemptEntry> history) {
        return AttributeValue.fromL(history.stream().map(HistoryCodec::entry).toList());
    }

    static List<AttemptEntry> decode(AttributeValue v) {
        if (v == null || !v.hasL()) {
            return List.of();
        }
        return v.l().stream().map(e -> e.s() != null ? entry(e.s()) : entry(e.m())).toList();
    }

    /** An entry as its JSON text, fields in a fixed order (the ledger's write token digests it). */
    static AttributeValue entry(AttemptEntry e) {
        // Written field by field with a streaming generator: this runs for every ledger write, and in a profile
        // most of the encoding's time went to serialising a tree built first (38 of its 46 samples).
        StringWriter out = new StringWriter(160);
        try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("number", e.number());
            g.writeNumberField("generation", e.generation());
            g.writeStringField("outcome", e.outcome().name());
            if (e.failureClass() != null) {
                g.writeStringField("failureClass", e.failureClass().name());
            }
            if (e.errorType() != null) {
                g.writeStringField("errorType", e.errorType());
            }
            if (e.message() != null && !e.message().isEmpty()) {
                g.writeStringField("message", e.message());
            }
            g.writeNumberField("startedAt", e.startedAt().toEpochMilli());
            if (e.endedAt() != null) {
                g.writeNumberField("endedAt", e.endedAt().toEpochMilli());
            }
            if (e.worker() != null) {
                g.writeStringField("worker", e.worker());
            }
            if (e.retryDelay() != null) {
                g.writeNumberField("retryDelayMs", e.retryDelay().toMillis());
            }
            if (e.isolated()) {
                g.writeBooleanField("isolated", true);
            }
            g.writeNumberField("othersInFlight", e.othersInFlight());
            g.writeEndObject();
        } catch (IOException impossible) {
            throw new UncheckedIOException(impossible);
        }
        return AttributeValue.fromS(out.toString());
    }

    private static AttemptEntry entry(String text) {
        JsonNode o;
        try {
            o = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an attempt history entry is not JSON", e);
        }
        JsonNode fc = o.get("failureClass");
        return new AttemptEntry(
                o.path("number").asInt(),
                o.path("generation").asInt(),
                AttemptOutcome.valueOf(o.path("outcome").asText()),
                fc == null ? null : FailureClass.valueOf(fc.asText()),
                text(o, "errorType"),
                text(o, "message"),
                millis(o, "startedAt"),
                millis(o, "endedAt"),
                text(o, "worker"),
                o.has("retryDelayMs") ? Duration.ofMillis(o.get("retryDelayMs").asLong()) : null,
                o.path("isolated").asBoolean(false),
                o.path("othersInFlight").asInt(0));
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static Instant millis(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : Instant.ofEpochMilli(v.asLong());
    }

    /** The earlier format: one map per entry, the same fields (numbers as N, text as S, a flag as BOOL). */
    static AttributeValue mapEntry(AttemptEntry e) {
        JsonNode fields;
        try {
            fields = JSON.readTree(entry(e).s());
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException(impossible);
        }
        Map<String, AttributeValue> m = new HashMap<>();
        fields.properties().forEach(f -> m.put(f.getKey(), f.getValue().isNumber() ? Attrs.n(f.getValue().asLong())
                : f.getValue().isBoolean() ? AttributeValue.fromBool(f.getValue().asBoolean()) : Attrs.s(f.getValue().asText())));
        return AttributeValue.fromM(m);
    }

    private static AttemptEntry entry(Map<String, AttributeValue> m) {
        String fc = Attrs.str(m, "failureClass");
        return new AttemptEntry(
                Attrs.integer(m, "number"),
                Attrs.integer(m, "generation"),
                AttemptOutcome.valueOf(Attrs.str(m, "outcome")),
                fc == null ? null : FailureClass.valueOf(fc),
                Attrs.str(m, "errorType"),
                Attrs.str(m, "message"),
                Attrs.instantMillis(m, "startedAt"),
                Attrs.instantMillis(m, "endedAt"),
                Attrs.str(m, "worker"),
                Attrs.durationMillis(m, "retryDelayMs"),
                m.containsKey("isolated") && Boolean.TRUE.equals(m.get("isolated").bool()),
                Attrs.integer(m, "othersInFlight") == null ? 0 : Attrs.integer(m, "othersInFlight"));
    }
}

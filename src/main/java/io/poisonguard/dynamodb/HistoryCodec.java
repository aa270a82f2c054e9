package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Attempt history as a DynamoDB list of maps, shared by the ledger and quarantine tables. */
final class HistoryCodec {
    private HistoryCodec() {
    }

    static AttributeValue encode(List<AttemptEntry> history) {
        return AttributeValue.fromL(history.stream().map(HistoryCodec::entry).toList());
    }

    static List<AttemptEntry> decode(AttributeValue v) {
        if (v == null || !v.hasL()) {
            return List.of();
        }
        return v.l().stream().map(e -> entry(e.m())).toList();
    }

    private static AttributeValue entry(AttemptEntry e) {
        Map<String, AttributeValue> m = new HashMap<>();
        m.put("number", Attrs.n(e.number()));
        m.put("generation", Attrs.n(e.generation()));
        m.put("outcome", Attrs.s(e.outcome().name()));
        if (e.failureClass() != null) {
            m.put("failureClass", Attrs.s(e.failureClass().name()));
        }
        if (e.errorType() != null) {
            m.put("errorType", Attrs.s(e.errorType()));
        }
        if (e.message() != null && !e.message().isEmpty()) {
            m.put("message", Attrs.s(e.message()));
        }
        m.put("startedAt", Attrs.millis(e.startedAt()));
        if (e.endedAt() != null) {
            m.put("endedAt", Attrs.millis(e.endedAt()));
        }
        if (e.worker() != null) {
            m.put("worker", Attrs.s(e.worker()));
        }
        if (e.retryDelay() != null) {
            m.put("retryDelayMs", Attrs.n(e.retryDelay().toMillis()));
        }
        if (e.isolated()) {
            m.put("isolated", AttributeValue.fromBool(true));
        }
        m.put("othersInFlight", Attrs.n(e.othersInFlight()));
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

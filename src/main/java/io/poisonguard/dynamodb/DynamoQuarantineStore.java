package io.poisonguard.dynamodb;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.quarantine.ReplayEntry;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Quarantine records in DynamoDB, keyed by job id, with GSIs by failure class and by tenant (both
 * sorted by quarantine time) and {@code expiresAt} as the TTL attribute. No payload is stored.
 */
public final class DynamoQuarantineStore implements QuarantineStore {
    static final String KEY = "jobId";
    static final String TTL = "expiresAt";
    public static final String BY_CLASS = "by-failure-class";
    public static final String BY_TENANT = "by-tenant";

    private final DynamoDbClient dynamo;
    private final String table;
    private final Clock clock;

    public DynamoQuarantineStore(DynamoDbClient dynamo, String table, Clock clock) {
        this.dynamo = dynamo;
        this.table = table;
        this.clock = clock;
    }

    @Override
    public boolean putIfAbsent(QuarantineRecord r) {
        try {
            dynamo.putItem(PutItemRequest.builder()
                    .tableName(table)
                    .item(encode(r))
                    .conditionExpression("attribute_not_exists(jobId) OR generation < :g OR expiresAt < :now")
                    .expressionAttributeValues(Map.of(":g", Attrs.n(r.generation()), ":now", Attrs.epochSeconds(clock.instant())))
                    .build());
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    @Override
    public Optional<QuarantineRecord> find(String jobId) {
        Map<String, AttributeValue> item = dynamo.getItem(GetItemRequest.builder()
                .tableName(table).key(Map.of(KEY, Attrs.s(jobId))).consistentRead(true).build()).item();
        if (item == null || item.isEmpty() || Attrs.expired(item, TTL, clock.instant())) {
            return Optional.empty();
        }
        return Optional.of(decode(item));
    }

    @Override
    public List<QuarantineRecord> byClass(FailureClass failureClass, Instant now, int limit) {
        List<QuarantineRecord> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse page = dynamo.query(QueryRequest.builder()
                    .tableName(table)
                    .indexName(BY_CLASS)
                    .keyConditionExpression("failureClass = :c")
                    .filterExpression("attribute_not_exists(expiresAt) OR expiresAt > :now")
                    .expressionAttributeValues(Map.of(":c", Attrs.s(failureClass.name()), ":now", Attrs.epochSeconds(now)))
                    .scanIndexForward(true)
                    .exclusiveStartKey(start)
                    .build());
            for (Map<String, AttributeValue> item : page.items()) {
                if (out.size() < limit) {
                    out.add(decode(item));
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null && out.size() < limit);
        return out;
    }

    @Override
    public QuarantinePage list(QuarantineQuery q, Instant now) {
        Map<String, AttributeValue> start = q.cursor().map(Cursors::decode).orElse(null);
        List<QuarantineRecord> out = new ArrayList<>();
        Map<String, AttributeValue> last;
        do {
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":now", Attrs.epochSeconds(now));
            List<String> filters = new ArrayList<>(List.of("(attribute_not_exists(expiresAt) OR expiresAt > :now)"));
            q.jobType().ifPresent(t -> {
                filters.add("jobType = :jt");
                values.put(":jt", Attrs.s(t));
            });
            q.status().ifPresent(st -> {
                filters.add("#status = :st");
                values.put(":st", Attrs.s(st.name()));
            });
            q.quarantinedBefore().ifPresent(t -> {
                filters.add("quarantinedAt <= :before");
                values.put(":before", Attrs.millis(t));
            });
            Map<String, String> names = q.status().isPresent() ? Map.of("#status", "status") : null;
            int pageSize = Math.max(q.limit() - out.size(), 1) * 4;
            List<Map<String, AttributeValue>> items;
            if (q.failureClass().isPresent() || q.tenant().isPresent()) {
                boolean byClass = q.failureClass().isPresent();
                if (byClass && q.tenant().isPresent()) {
                    filters.add("tenant = :tenant");
                    values.put(":tenant", Attrs.s(q.tenant().get()));
                }
                values.put(":k", Attrs.s(byClass ? q.failureClass().get().name() : q.tenant().get()));
                QueryResponse page = dynamo.query(QueryRequest.builder().tableName(table)
                        .indexName(byClass ? BY_CLASS : BY_TENANT)
                        .keyConditionExpression((byClass ? "failureClass" : "tenant") + " = :k")
                        .filterExpression(String.join(" AND ", filters))
                        .expressionAttributeNames(names)
                        .expressionAttributeValues(values)
                        .exclusiveStartKey(start).limit(pageSize).build());
                items = page.items();
                last = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
            } else {
                ScanResponse page = dynamo.scan(ScanRequest.builder().tableName(table)
                        .filterExpression(String.join(" AND ", filters))
                        .expressionAttributeNames(names)
                        .expressionAttributeValues(values)
                        .exclusiveStartKey(start).limit(pageSize).build());
                items = page.items();
                last = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
            }
            for (Map<String, AttributeValue> item : items) {
                out.add(decode(item));
                if (out.size() == q.limit()) {
                    // Continue right after this item next time, whatever else the page held.
                    last = keyOf(item, q);
                    break;
                }
            }
            start = last;
        } while (start != null && out.size() < q.limit());
        return new QuarantinePage(out, start == null ? null : Cursors.encode(start));
    }

    private static Map<String, AttributeValue> keyOf(Map<String, AttributeValue> item, QuarantineQuery q) {
        Map<String, AttributeValue> key = new HashMap<>();
        key.put(KEY, item.get(KEY));
        if (q.failureClass().isPresent()) {
            key.put("failureClass", item.get("failureClass"));
            key.put("quarantinedAt", item.get("quarantinedAt"));
        } else if (q.tenant().isPresent()) {
            key.put("tenant", item.get("tenant"));
            key.put("quarantinedAt", item.get("quarantinedAt"));
        }
        return key;
    }

    @Override
    public void updateStatus(String jobId, QuarantineStatus status, Optional<ReplayEntry> replay) {
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":st", Attrs.s(status.name()));
        String update = "SET #status = :st";
        if (replay.isPresent()) {
            values.put(":r", replays(List.of(replay.get())));
            values.put(":empty", AttributeValue.fromL(List.of()));
            update += ", replays = list_append(if_not_exists(replays, :empty), :r)";
        }
        dynamo.updateItem(UpdateItemRequest.builder().tableName(table).key(Map.of(KEY, Attrs.s(jobId)))
                .updateExpression(update)
                .conditionExpression("attribute_exists(jobId)")
                .expressionAttributeNames(Map.of("#status", "status"))
                .expressionAttributeValues(values).build());
    }

    @Override
    public void recordReplayOutcome(String jobId, int generation, QuarantineStatus status, String outcome) {
        Optional<QuarantineRecord> current = find(jobId);
        if (current.isEmpty()) {
            return;
        }
        List<ReplayEntry> replays = current.get().replays().stream()
                .map(e -> e.generation() == generation ? new ReplayEntry(e.generation(), e.at(), e.actor(), e.reason(), outcome) : e)
                .toList();
        dynamo.updateItem(UpdateItemRequest.builder().tableName(table).key(Map.of(KEY, Attrs.s(jobId)))
                .updateExpression("SET #status = :st, replays = :r")
                .expressionAttributeNames(Map.of("#status", "status"))
                .expressionAttributeValues(Map.of(":st", Attrs.s(status.name()), ":r", replays(replays))).build());
    }

    static Map<String, AttributeValue> encode(QuarantineRecord r) {
        Map<String, AttributeValue> m = new HashMap<>();
        m.put(KEY, Attrs.s(r.jobId()));
        m.put("tenant", Attrs.s(r.tenant() == null ? "unknown" : r.tenant()));
        m.put("jobType", Attrs.s(r.jobType() == null ? "unknown" : r.jobType()));
        m.put("generation", Attrs.n(r.generation()));
        m.put("failureClass", Attrs.s(r.failureClass().name()));
        m.put("reason", Attrs.s(r.reason()));
        m.put("attempts", Attrs.n(r.attempts()));
        Map<String, AttributeValue> failures = new HashMap<>();
        r.failures().forEach((c, n) -> failures.put(c.name(), Attrs.n(n)));
        m.put("failures", AttributeValue.fromM(failures));
        Diagnostics d = r.diagnostics();
        m.put("sizeBytes", Attrs.n(d.sizeBytes()));
        m.put("charset", Attrs.s(d.charset()));
        if (d.transferEncoding() != null) {
            m.put("transferEncoding", Attrs.s(d.transferEncoding()));
        }
        if (d.tokenEstimate() != null) {
            m.put("tokenEstimate", Attrs.n(d.tokenEstimate()));
        }
        if (d.schemaVersion() != null) {
            m.put("schemaVersion", Attrs.n(d.schemaVersion()));
        }
        if (d.attachmentCount() != null) {
            m.put("attachmentCount", Attrs.n(d.attachmentCount()));
        }
        m.put("history", HistoryCodec.encode(r.history()));
        m.put("firstSeen", Attrs.millis(r.firstSeen()));
        m.put("lastSeen", Attrs.millis(r.lastSeen()));
        m.put("quarantinedAt", Attrs.millis(r.quarantinedAt()));
        m.put(TTL, Attrs.epochSeconds(r.expiresAt()));
        m.put("sourceMessageId", Attrs.s(r.sourceMessageId()));
        m.put("status", Attrs.s(r.status().name()));
        m.put("replays", replays(r.replays()));
        if (r.receiveCount() != null) {
            m.put("receiveCount", Attrs.n(r.receiveCount()));
        }
        m.put("deadLetter", Attrs.s(r.deadLetter().state().name()));
        if (r.deadLetter().detail() != null) {
            m.put("deadLetterDetail", Attrs.s(r.deadLetter().detail()));
        }
        m.put("sourceKept", AttributeValue.fromBool(r.deadLetter().sourceKept()));
        return m;
    }

    private static Map<FailureClass, Integer> failures(AttributeValue v) {
        Map<FailureClass, Integer> out = new java.util.EnumMap<>(FailureClass.class);
        if (v != null && v.hasM()) {
            v.m().forEach((k, n) -> out.put(FailureClass.valueOf(k), Integer.valueOf(n.n())));
        }
        return out;
    }

    private static AttributeValue replays(List<ReplayEntry> replays) {
        return AttributeValue.fromL(replays.stream().map(e -> {
            Map<String, AttributeValue> m = new HashMap<>();
            m.put("generation", Attrs.n(e.generation()));
            m.put("at", Attrs.millis(e.at()));
            m.put("actor", Attrs.s(e.actor()));
            m.put("reason", Attrs.s(e.reason()));
            if (e.outcome() != null) {
                m.put("outcome", Attrs.s(e.outcome()));
            }
            return AttributeValue.fromM(m);
        }).toList());
    }

    private static List<ReplayEntry> replays(AttributeValue v) {
        if (v == null || !v.hasL()) {
            return List.of();
        }
        return v.l().stream().map(a -> new ReplayEntry(Attrs.integer(a.m(), "generation"), Attrs.instantMillis(a.m(), "at"),
                Attrs.str(a.m(), "actor"), Attrs.str(a.m(), "reason"), Attrs.str(a.m(), "outcome"))).toList();
    }

    static QuarantineRecord decode(Map<String, AttributeValue> m) {
        Diagnostics d = new Diagnostics(Attrs.lng(m, "sizeBytes", 0), Attrs.str(m, "charset"), Attrs.str(m, "transferEncoding"),
                Attrs.integer(m, "tokenEstimate"), Attrs.integer(m, "schemaVersion"), Attrs.integer(m, "attachmentCount"));
        return new QuarantineRecord(
                Attrs.str(m, KEY),
                Attrs.str(m, "tenant"),
                Attrs.str(m, "jobType"),
                Attrs.integer(m, "generation"),
                FailureClass.valueOf(Attrs.str(m, "failureClass")),
                Attrs.str(m, "reason"),
                Attrs.integer(m, "attempts"),
                failures(m.get("failures")),
                d,
                HistoryCodec.decode(m.get("history")),
                Attrs.instantMillis(m, "firstSeen"),
                Attrs.instantMillis(m, "lastSeen"),
                Attrs.instantMillis(m, "quarantinedAt"),
                Attrs.instantSeconds(m, TTL),
                Attrs.str(m, "sourceMessageId"),
                Attrs.str(m, "status") == null ? QuarantineStatus.QUARANTINED : QuarantineStatus.valueOf(Attrs.str(m, "status")),
                replays(m.get("replays")),
                Attrs.integer(m, "receiveCount"),
                deadLetter(m));
    }

    private static DeadLetterCopy deadLetter(Map<String, AttributeValue> m) {
        String state = Attrs.str(m, "deadLetter");
        if (state == null) {
            return null;
        }
        AttributeValue kept = m.get("sourceKept");
        return new DeadLetterCopy(DeadLetterCopy.State.valueOf(state), Attrs.str(m, "deadLetterDetail"),
                kept != null && Boolean.TRUE.equals(kept.bool()));
    }
}

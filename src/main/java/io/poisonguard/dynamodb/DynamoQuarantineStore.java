package io.poisonguard.dynamodb;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

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

    static Map<String, AttributeValue> encode(QuarantineRecord r) {
        Map<String, AttributeValue> m = new HashMap<>();
        m.put(KEY, Attrs.s(r.jobId()));
        m.put("tenant", Attrs.s(r.tenant() == null ? "unknown" : r.tenant()));
        m.put("jobType", Attrs.s(r.jobType() == null ? "unknown" : r.jobType()));
        m.put("generation", Attrs.n(r.generation()));
        m.put("failureClass", Attrs.s(r.failureClass().name()));
        m.put("reason", Attrs.s(r.reason()));
        m.put("attempts", Attrs.n(r.attempts()));
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
        return m;
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
                d,
                HistoryCodec.decode(m.get("history")),
                Attrs.instantMillis(m, "firstSeen"),
                Attrs.instantMillis(m, "lastSeen"),
                Attrs.instantMillis(m, "quarantinedAt"),
                Attrs.instantSeconds(m, TTL),
                Attrs.str(m, "sourceMessageId"));
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The audit trail in DynamoDB: partition jobId, sort key "instant#nonce". Each entry is put with
 * attribute_not_exists, so nothing overwrites an earlier entry.
 */
public final class DynamoAuditLog implements AuditLog {
    private final DynamoDbClient dynamo;
    private final String table;

    public DynamoAuditLog(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    @Override
    public void append(AuditEntry e) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("jobId", Attrs.s(e.jobId()));
        item.put("at", Attrs.s(e.at().toString() + "#" + UUID.randomUUID().toString().substring(0, 8)));
        item.put("atMillis", Attrs.millis(e.at()));
        item.put("actor", Attrs.s(e.actor()));
        item.put("action", Attrs.s(e.action().name()));
        item.put("reason", Attrs.s(e.reason() == null ? "" : e.reason()));
        item.put("codeVersion", Attrs.s(e.codeVersion()));
        if (e.generation() != null) {
            item.put("generation", Attrs.n(e.generation()));
        }
        if (e.attempt() != null) {
            item.put("attempt", Attrs.n(e.attempt()));
        }
        item.put("outcome", Attrs.s(e.outcome()));
        if (e.detail() != null && !e.detail().isEmpty()) {
            item.put("detail", Attrs.s(e.detail()));
        }
        dynamo.putItem(b -> b.tableName(table).item(item).conditionExpression("attribute_not_exists(jobId)"));
    }

    @Override
    public List<AuditEntry> forJob(String jobId, int limit) {
        return dynamo.query(b -> b.tableName(table).keyConditionExpression("jobId = :j")
                        .expressionAttributeValues(Map.of(":j", Attrs.s(jobId))).scanIndexForward(true).limit(limit)).items()
                .stream().map(DynamoAuditLog::decode).toList();
    }

    @Override
    public List<AuditEntry> recent(int limit) {
        // A scan: the audit table holds operator actions, a small volume next to jobs.
        List<AuditEntry> all = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = dynamo.scan(b -> b.tableName(table).exclusiveStartKey(from));
            page.items().forEach(i -> all.add(decode(i)));
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return all.stream().sorted(Comparator.comparing(AuditEntry::at).reversed()).limit(limit).toList();
    }

    private static AuditEntry decode(Map<String, AttributeValue> i) {
        return new AuditEntry(Attrs.str(i, "jobId"), Attrs.instantMillis(i, "atMillis"), Attrs.str(i, "actor"),
                AuditAction.valueOf(Attrs.str(i, "action")), Attrs.str(i, "reason"), Attrs.str(i, "codeVersion"),
                Attrs.integer(i, "generation"), Attrs.integer(i, "attempt"), Attrs.str(i, "outcome"), Attrs.str(i, "detail"));
    }
}

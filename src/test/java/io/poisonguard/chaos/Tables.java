package io.poisonguard.chaos;

import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerRecord;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** Whole-table reads by scan, by job id: one pass instead of a read per job. */
final class Tables {
    private Tables() {
    }

    /**
     * jobId to the ledger fields the chaos run reads ({@code tenant}, {@code state}, {@code quarantineClass},
     * {@code attempt} and {@code failures.<CLASS>}, as text), from items of either format: a compact item holds
     * most of them inside one JSON attribute, so they are read through the store's own decoding.
     */
    static Map<String, Map<String, String>> ledger(DynamoDbClient dynamo, String table) {
        Map<String, Map<String, String>> out = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = dynamo.scan(b -> b.tableName(table).consistentRead(true).exclusiveStartKey(from));
            for (Map<String, AttributeValue> item : page.items()) {
                LedgerRecord r = DynamoLedgerStore.decode(item);
                out.put(r.jobId(), fields(r));
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }

    static Map<String, String> fields(LedgerRecord r) {
        Map<String, String> values = new HashMap<>();
        putIf(values, "tenant", r.tenant());
        putIf(values, "state", r.state() == null ? null : r.state().name());
        putIf(values, "quarantineClass", r.quarantineClass() == null ? null : r.quarantineClass().name());
        values.put("attempt", Integer.toString(r.attempt()));
        r.failures().forEach((c, n) -> values.put("failures." + c.name(), Integer.toString(n)));
        return values;
    }

    private static void putIf(Map<String, String> m, String k, String v) {
        if (v != null) {
            m.put(k, v);
        }
    }

    /** jobId to the named attributes (strings and numbers as text) of every item of a table keyed by jobId. */
    static Map<String, Map<String, String>> scan(DynamoDbClient dynamo, String table, Set<String> attributes) {
        Set<String> all = new LinkedHashSet<>();
        all.add("jobId");
        all.add("tenant");
        all.addAll(attributes);
        Map<String, String> placeholders = new HashMap<>();
        int i = 0;
        for (String a : all) {
            placeholders.put("#a" + i++, a);
        }
        String projection = placeholders.keySet().stream().sorted().collect(Collectors.joining(", "));
        Map<String, Map<String, String>> out = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = dynamo.scan(b -> b.tableName(table).projectionExpression(projection)
                    .expressionAttributeNames(placeholders).exclusiveStartKey(from));
            for (Map<String, AttributeValue> item : page.items()) {
                Map<String, String> values = new HashMap<>();
                item.forEach((k, v) -> values.put(k, v.s() != null ? v.s() : v.n()));
                // Items are keyed by <tenant>/<job id>: the map is by job id (a chaos run uses one tenant).
                out.put(JobKey.fromStorage(item.get("jobId").s(), values.get("tenant")).jobId(), values);
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }
}

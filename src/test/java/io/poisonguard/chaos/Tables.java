package io.poisonguard.chaos;

import io.poisonguard.ledger.JobKey;
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

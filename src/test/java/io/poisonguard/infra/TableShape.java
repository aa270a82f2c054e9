package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the code depends on in a table: key schema (in order), attribute types, secondary indexes,
 * billing mode and TTL attribute, comparable between a CreateTable request and the template.
 */
record TableShape(List<String> keys, Map<String, String> attributeTypes, Map<String, Index> indexes, String billing, String ttl) {

    record Index(List<String> keys, String projection, List<String> nonKeyAttributes) {
    }

    static TableShape of(CreateTableRequest r, String ttl) {
        Map<String, String> attrs = new TreeMap<>();
        r.attributeDefinitions().forEach(a -> attrs.put(a.attributeName(), a.attributeTypeAsString()));
        Map<String, Index> indexes = new TreeMap<>();
        for (GlobalSecondaryIndex g : r.globalSecondaryIndexes()) {
            indexes.put(g.indexName(), new Index(keys(g.keySchema()), g.projection().projectionTypeAsString(),
                    g.projection().hasNonKeyAttributes() ? g.projection().nonKeyAttributes() : List.of()));
        }
        return new TableShape(keys(r.keySchema()), attrs, indexes, r.billingModeAsString(), ttl);
    }

    /** From the template's (evaluated) AWS::DynamoDB::Table properties. */
    static TableShape of(JsonNode p) {
        Map<String, String> attrs = new TreeMap<>();
        p.path("AttributeDefinitions").forEach(a -> attrs.put(a.path("AttributeName").asText(), a.path("AttributeType").asText()));
        Map<String, Index> indexes = new TreeMap<>();
        p.path("GlobalSecondaryIndexes").forEach(g -> {
            List<String> nonKey = new ArrayList<>();
            g.path("Projection").path("NonKeyAttributes").forEach(a -> nonKey.add(a.asText()));
            indexes.put(g.path("IndexName").asText(), new Index(keys(g.path("KeySchema")),
                    g.path("Projection").path("ProjectionType").asText(), nonKey));
        });
        JsonNode ttl = p.path("TimeToLiveSpecification");
        return new TableShape(keys(p.path("KeySchema")), attrs, indexes, p.path("BillingMode").asText(),
                ttl.path("Enabled").asBoolean(false) ? ttl.path("AttributeName").asText() : null);
    }

    private static List<String> keys(List<KeySchemaElement> schema) {
        return schema.stream().map(k -> k.attributeName() + " " + k.keyTypeAsString()).toList();
    }

    private static List<String> keys(JsonNode schema) {
        List<String> out = new ArrayList<>();
        schema.forEach(k -> out.add(k.path("AttributeName").asText() + " " + k.path("KeyType").asText()));
        return out;
    }
}

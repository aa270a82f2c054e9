package io.poisonguard.dynamodb;

import io.poisonguard.replay.ReplayQuota;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

import java.time.Instant;
import java.util.Map;

/**
 * The fleet's replay count in the bulk replays table: one item per window ({@code id} {@value #PREFIX}{@code <window>}), its
 * {@code sent} raised by one conditional update per replay while it is below the limit, and expired by the table's TTL.
 */
public final class DynamoReplayQuota implements ReplayQuota {
    /** The key prefix of a window's count; never a bulk replay's id (those are UUIDs). */
    public static final String PREFIX = "replay-rate#";
    private static final String STORE = "the bulk replay table";

    private final DynamoDbClient dynamo;
    private final String table;

    public DynamoReplayQuota(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    @Override
    public boolean claim(long window, int limit, Instant forgetAfter) {
        try {
            Unavailability.write(STORE, () -> dynamo.updateItem(r -> r.tableName(table)
                    .key(Map.of("id", Attrs.s(PREFIX + window)))
                    .updateExpression("ADD sent :one SET expiresAt = :ttl")
                    .conditionExpression("attribute_not_exists(sent) OR sent < :limit")
                    .expressionAttributeValues(Map.of(":one", Attrs.n(1), ":limit", Attrs.n(limit), ":ttl", Attrs.epochSeconds(forgetAfter)))));
            return true;
        } catch (ConditionalCheckFailedException full) {
            return false;
        }
    }
}

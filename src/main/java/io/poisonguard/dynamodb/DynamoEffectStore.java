package io.poisonguard.dynamodb;

import io.poisonguard.effects.EffectStore;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Instant;
import java.util.Map;

/**
 * Effect records in DynamoDB, keyed by (jobId, effect). A claim is one conditional UpdateItem; a
 * failed condition is answered by a consistent read that tells DONE from BUSY.
 */
public final class DynamoEffectStore implements EffectStore {
    static final String KEY = "jobId";
    static final String SORT = "effect";

    private final DynamoDbClient dynamo;
    private final String table;

    public DynamoEffectStore(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    private static Map<String, AttributeValue> key(String jobId, String effect) {
        return Map.of(KEY, Attrs.s(jobId), SORT, Attrs.s(effect));
    }

    @Override
    public Claim claim(String jobId, String effect, String owner, Instant now, Instant until, Instant expiresAt) {
        try {
            Unavailability.write("the effect records", () -> dynamo.updateItem(UpdateItemRequest.builder()
                    .tableName(table)
                    .key(key(jobId, effect))
                    .updateExpression("SET #state = :pending, #owner = :owner, leaseUntil = :until, expiresAt = :exp, claimedAt = :now")
                    .conditionExpression("attribute_not_exists(jobId) OR expiresAt < :nowSec"
                            + " OR (#state = :pending AND (leaseUntil < :nowMs OR #owner = :owner))")
                    .expressionAttributeNames(Map.of("#state", "state", "#owner", "owner"))
                    .expressionAttributeValues(Map.of(
                            ":pending", Attrs.s("PENDING"),
                            ":owner", Attrs.s(owner),
                            ":until", Attrs.millis(until),
                            ":exp", Attrs.epochSeconds(expiresAt),
                            ":now", Attrs.millis(now),
                            ":nowMs", Attrs.millis(now),
                            ":nowSec", Attrs.epochSeconds(now)))
                    .build()));
            return Claim.GRANTED;
        } catch (ConditionalCheckFailedException e) {
            Map<String, AttributeValue> item = Unavailability.read("the effect records", () -> dynamo.getItem(GetItemRequest.builder()
                    .tableName(table).key(key(jobId, effect)).consistentRead(true).build()).item());
            return item != null && "DONE".equals(Attrs.str(item, "state")) ? Claim.DONE : Claim.BUSY;
        }
    }

    @Override
    public void complete(String jobId, String effect, String owner, Instant now) {
        Unavailability.write("the effect records", () -> dynamo.updateItem(UpdateItemRequest.builder()
                .tableName(table)
                .key(key(jobId, effect))
                .updateExpression("SET #state = :done, doneAt = :now REMOVE leaseUntil")
                .conditionExpression("#owner = :owner")
                .expressionAttributeNames(Map.of("#state", "state", "#owner", "owner"))
                .expressionAttributeValues(Map.of(":done", Attrs.s("DONE"), ":now", Attrs.millis(now), ":owner", Attrs.s(owner)))
                .build()));
    }

    @Override
    public void release(String jobId, String effect, String owner) {
        try {
            dynamo.deleteItem(DeleteItemRequest.builder()
                    .tableName(table)
                    .key(key(jobId, effect))
                    .conditionExpression("#owner = :owner AND #state = :pending")
                    .expressionAttributeNames(Map.of("#state", "state", "#owner", "owner"))
                    .expressionAttributeValues(Map.of(":owner", Attrs.s(owner), ":pending", Attrs.s("PENDING")))
                    .build());
        } catch (ConditionalCheckFailedException e) {
            // Someone else's claim now, or already done: nothing of ours to give back.
        }
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.systemic.GuardBoard;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The fleet's guard board as one item of the bulk replays table ({@code id} {@value #ID}): an attribute per tripped worker
 * ({@value #WORKER}{@code <worker id>}: since, cause, heard), set and removed by one UpdateItem each, and {@code resumedAt}.
 * One GetItem reads it. A worker posts only while tripped, so the item holds the stopped workers (and those that stopped
 * while tripped until they are forgotten), far below DynamoDB's 400 KB.
 */
public final class DynamoGuardBoard implements GuardBoard {
    /** The board's key; never a bulk replay's id (those are UUIDs). */
    public static final String ID = "fleet-guards";
    static final String WORKER = "w#";
    private static final String STORE = "the bulk replay table";
    /** A cause is cut to this on the board. */
    private static final int CAUSE_CHARS = 500;

    private final DynamoDbClient dynamo;
    private final String table;

    public DynamoGuardBoard(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    private Map<String, AttributeValue> key() {
        return Map.of("id", Attrs.s(ID));
    }

    @Override
    public void tripped(String worker, Instant since, String cause, Instant now) {
        String c = cause == null ? "" : cause.length() > CAUSE_CHARS ? cause.substring(0, CAUSE_CHARS) : cause;
        AttributeValue posted = AttributeValue.fromM(Map.of("since", Attrs.millis(since), "cause", Attrs.s(c), "heard", Attrs.millis(now)));
        Unavailability.write(STORE, () -> dynamo.updateItem(r -> r.tableName(table).key(key()).updateExpression("SET #w = :p")
                .expressionAttributeNames(Map.of("#w", WORKER + worker)).expressionAttributeValues(Map.of(":p", posted))));
    }

    @Override
    public void cleared(String worker) {
        Unavailability.write(STORE, () -> dynamo.updateItem(r -> r.tableName(table).key(key()).updateExpression("REMOVE #w")
                .expressionAttributeNames(Map.of("#w", WORKER + worker))));
    }

    @Override
    public void resumed(Instant at) {
        try {
            Unavailability.write(STORE, () -> dynamo.updateItem(r -> r.tableName(table).key(key()).updateExpression("SET resumedAt = :at")
                    .conditionExpression("attribute_not_exists(resumedAt) OR resumedAt < :at")
                    .expressionAttributeValues(Map.of(":at", Attrs.millis(at)))));
        } catch (ConditionalCheckFailedException newer) {
            // A newer resume is posted already.
        }
    }

    @Override
    public Board read() {
        Map<String, AttributeValue> item = Unavailability.read(STORE, () -> dynamo.getItem(r -> r.tableName(table).key(key())
                .consistentRead(true)).item());
        Map<String, Posted> workers = new HashMap<>();
        if (item == null || item.isEmpty()) {
            return new Board(workers, Optional.empty());
        }
        item.forEach((name, v) -> {
            if (name.startsWith(WORKER) && v.hasM()) {
                workers.put(name.substring(WORKER.length()), new Posted(Attrs.instantMillis(v.m(), "since"), Attrs.str(v.m(), "cause"),
                        Attrs.instantMillis(v.m(), "heard")));
            }
        });
        return new Board(workers, Optional.ofNullable(item.get("resumedAt")).map(v -> Instant.ofEpochMilli(Long.parseLong(v.n()))));
    }

    @Override
    public void forget(Collection<String> workers) {
        for (String w : workers) {
            cleared(w);
        }
    }
}

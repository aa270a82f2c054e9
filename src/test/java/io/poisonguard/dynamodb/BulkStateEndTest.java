package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.replay.BulkReplay;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A bulk replay's state was written unconditionally: a write of a running state that the SDK gave up on (its attempt timed out)
 * could still be applied by DynamoDB after the batch's end was kept, and the batch read as running, then ABANDONED, on every
 * instance, though its audit entry said it had ended. A running state is now written only where no end is kept.
 */
class BulkStateEndTest {
    @Test
    void aRunningStateIsWrittenOnlyWhereNoEndIsKeptAndOneRefusedForThatIsNoError() {
        List<PutItemRequest> puts = new ArrayList<>();
        DynamoDbClient dynamo = (DynamoDbClient) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{DynamoDbClient.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "putItem" -> {
                        @SuppressWarnings("unchecked")
                        Consumer<PutItemRequest.Builder> build = (Consumer<PutItemRequest.Builder>) args[0];
                        PutItemRequest.Builder b = PutItemRequest.builder();
                        build.accept(b);
                        PutItemRequest request = b.build();
                        puts.add(request);
                        if (request.conditionExpression() != null) {
                            throw ConditionalCheckFailedException.builder().message("The conditional request failed").build();
                        }
                        yield null;
                    }
                    case "serviceName" -> "dynamodb";
                    default -> throw new AssertionError("unexpected call " + method.getName());
                });
        DynamoBulkReplayStore store = new DynamoBulkReplayStore(dynamo, "bulk", Clock.systemUTC());
        Instant now = Instant.now();
        BulkReplay running = new BulkReplay("b-1", "olga", "fixed", "acme", FailureClass.PERMANENT, 3, BulkReplay.Status.WIDENING, "j-1",
                "SUCCEEDED", List.of(), now, now, null, "", 0, 0);
        BulkReplay ended = new BulkReplay("b-1", "olga", "fixed", "acme", FailureClass.PERMANENT, 3, BulkReplay.Status.COMPLETED, "j-1",
                "SUCCEEDED", List.of(), now, now, now, "", 0, 0);

        store.put(running);
        store.put(ended);

        assertEquals("attribute_not_exists(finishedAt)", puts.get(0).conditionExpression());
        assertNull(puts.get(1).conditionExpression(), "an end is written whatever is there");
    }
}

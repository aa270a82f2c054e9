package io.poisonguard.testing;

import io.poisonguard.config.Names;
import io.poisonguard.dynamodb.TableBootstrap;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A DynamoDB client on the shared emulator that keeps every {@code PutItem} and {@code UpdateItem} request it sends, in
 * order, with poison-guard's tables created afresh under a prefix of its own: for tests that check what the ledger
 * writes on the wire as well as what it stores.
 */
public final class RecordingDynamo implements AutoCloseable {
    private final List<PutItemRequest> puts = new CopyOnWriteArrayList<>();
    private final List<UpdateItemRequest> updates = new CopyOnWriteArrayList<>();
    private final DynamoDbClient client;
    private final Names names;

    private RecordingDynamo(String prefixStart) {
        this.client = EmulatorClients.dynamo(Emulators.shared(), new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                if (context.request() instanceof UpdateItemRequest u) {
                    updates.add(u);
                }
                if (context.request() instanceof PutItemRequest p) {
                    puts.add(p);
                }
            }
        });
        this.names = new Names(prefixStart + UUID.randomUUID().toString().substring(0, 6));
    }

    /** A recording client and poison-guard's tables under a new prefix starting with {@code prefixStart}. */
    public static RecordingDynamo onFreshTables(String prefixStart) {
        RecordingDynamo r = new RecordingDynamo(prefixStart);
        new TableBootstrap(r.client, r.names).ensureTables();
        return r;
    }

    public DynamoDbClient client() {
        return client;
    }

    public Names names() {
        return names;
    }

    /** Every {@code PutItem} sent so far, oldest first (live: later ones are added to it). */
    public List<PutItemRequest> puts() {
        return puts;
    }

    /** Every {@code UpdateItem} sent so far, oldest first (live). */
    public List<UpdateItemRequest> updates() {
        return updates;
    }

    @Override
    public void close() {
        client.close();
    }
}

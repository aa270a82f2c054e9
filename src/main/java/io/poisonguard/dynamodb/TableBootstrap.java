package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import org.jboss.logging.Logger;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Projection;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveSpecification;

import java.util.ArrayList;
import java.util.List;

/**
 * Creates the ledger, quarantine, payloads, audit, bulk-replays and tenants tables when missing, idempotently. In production they
 * come from infra/; this is for local runs and tests. An endpoint without TTL support (dynalite) is
 * tolerated: every read already treats an expired item as gone.
 */
public final class TableBootstrap {
    private static final Logger LOG = Logger.getLogger(TableBootstrap.class);
    public static final String TTL_ATTRIBUTE = "expiresAt";

    private final DynamoDbClient dynamo;
    private final Names names;

    public TableBootstrap(DynamoDbClient dynamo, Names names) {
        this.dynamo = dynamo;
        this.names = names;
    }

    public void ensureTables() {
        boolean ttlMissing = false;
        ttlMissing |= ensure(names.ledgerTable(), List.of(key("jobId", KeyType.HASH)), List.of(attr("jobId", ScalarAttributeType.S)), List.of());
        ttlMissing |= ensure(names.quarantineTable(), List.of(key("jobId", KeyType.HASH)),
                List.of(attr("jobId", ScalarAttributeType.S), attr("failureClass", ScalarAttributeType.S),
                        attr("tenant", ScalarAttributeType.S), attr("quarantinedAt", ScalarAttributeType.N),
                        attr(DynamoQuarantineStore.JOB, ScalarAttributeType.S)),
                List.of(index(DynamoQuarantineStore.BY_CLASS, "failureClass"), index(DynamoQuarantineStore.BY_TENANT, "tenant"),
                        index(DynamoQuarantineStore.BY_JOB, DynamoQuarantineStore.JOB)));
        ttlMissing |= ensure(names.payloadsTable(), List.of(key(DynamoPayloadVault.KEY, KeyType.HASH), key(DynamoPayloadVault.PART, KeyType.RANGE)),
                List.of(attr(DynamoPayloadVault.KEY, ScalarAttributeType.S), attr(DynamoPayloadVault.PART, ScalarAttributeType.N)), List.of());
        ttlMissing |= ensure(names.auditTable(), List.of(key("jobId", KeyType.HASH), key("at", KeyType.RANGE)),
                List.of(attr("jobId", ScalarAttributeType.S), attr("at", ScalarAttributeType.S), attr("tenant", ScalarAttributeType.S),
                        attr("day", ScalarAttributeType.S), attr("atMillis", ScalarAttributeType.N)),
                List.of(index(DynamoAuditLog.BY_TENANT, "tenant", "atMillis"), index(DynamoAuditLog.BY_DAY, "day", "atMillis")));
        ttlMissing |= ensure(names.bulkReplaysTable(), List.of(key("id", KeyType.HASH)), List.of(attr("id", ScalarAttributeType.S)), List.of());
        ensure(names.tenantsTable(), List.of(key("tenant", KeyType.HASH)), List.of(attr("tenant", ScalarAttributeType.S)), List.of());
        if (ttlMissing) {
            LOG.warn("The DynamoDB endpoint does not support UpdateTimeToLive (an emulator gap): expired items are never "
                    + "deleted there; poison-guard treats every item past its expiresAt as gone on read");
        }
    }

    /** Returns true when the endpoint refused to enable TTL. */
    private boolean ensure(String table, List<KeySchemaElement> keys, List<AttributeDefinition> attrs, List<GlobalSecondaryIndex> indexes) {
        try {
            dynamo.describeTable(b -> b.tableName(table));
        } catch (ResourceNotFoundException e) {
            CreateTableRequest.Builder req = CreateTableRequest.builder()
                    .tableName(table).keySchema(keys).attributeDefinitions(attrs).billingMode(BillingMode.PAY_PER_REQUEST);
            if (!indexes.isEmpty()) {
                req.globalSecondaryIndexes(new ArrayList<>(indexes));
            }
            try {
                dynamo.createTable(req.build());
                LOG.infof("Created table %s", table);
            } catch (ResourceInUseException raced) {
                LOG.debugf("Table %s was created concurrently", table);
            }
        }
        waitActive(table);
        try {
            dynamo.updateTimeToLive(b -> b.tableName(table)
                    .timeToLiveSpecification(TimeToLiveSpecification.builder().attributeName(TTL_ATTRIBUTE).enabled(true).build()));
            return false;
        } catch (DynamoDbException e) {
            if (e.getMessage() != null && e.getMessage().contains("already enabled")) {
                return false;
            }
            LOG.debugf("UpdateTimeToLive on %s refused: %s", table, e.awsErrorDetails() == null ? e.getMessage() : e.awsErrorDetails().errorCode());
            return true;
        }
    }

    /**
     * How long and how often a new table is polled until it is active: from 100 ms, doubling up to 5 s, for at most
     * 10 minutes. The SDK's own waiter sleeps 20 s before its second look, so a table that was not active at the
     * first one (an emulator on a busy machine, a table with indexes) held the boot 20 s; on AWS a table takes
     * seconds, and one with indexes up to minutes.
     */
    private static final java.util.function.Consumer<software.amazon.awssdk.core.waiters.WaiterOverrideConfiguration.Builder> UNTIL_ACTIVE =
            w -> w.backoffStrategyV2(software.amazon.awssdk.retries.api.BackoffStrategy.exponentialDelayWithoutJitter(
                    java.time.Duration.ofMillis(100), java.time.Duration.ofSeconds(5)))
                    .maxAttempts(400).waitTimeout(java.time.Duration.ofMinutes(10));

    private void waitActive(String table) {
        dynamo.waiter().waitUntilTableExists(b -> b.tableName(table), UNTIL_ACTIVE);
        TableStatus status = dynamo.describeTable(b -> b.tableName(table)).table().tableStatus();
        if (status != TableStatus.ACTIVE) {
            dynamo.waiter().waitUntilTableExists(b -> b.tableName(table), UNTIL_ACTIVE);
        }
    }

    private static KeySchemaElement key(String name, KeyType type) {
        return KeySchemaElement.builder().attributeName(name).keyType(type).build();
    }

    private static AttributeDefinition attr(String name, ScalarAttributeType type) {
        return AttributeDefinition.builder().attributeName(name).attributeType(type).build();
    }

    private static GlobalSecondaryIndex index(String name, String hashKey) {
        return index(name, hashKey, "quarantinedAt");
    }

    private static GlobalSecondaryIndex index(String name, String hashKey, String rangeKey) {
        return GlobalSecondaryIndex.builder()
                .indexName(name)
                .keySchema(key(hashKey, KeyType.HASH), key(rangeKey, KeyType.RANGE))
                .projection(Projection.builder().projectionType(ProjectionType.ALL).build())
                .build();
    }
}

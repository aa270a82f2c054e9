package io.poisonguard.dynamodb;

import io.poisonguard.tenants.Tenant;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.tenants.TenantStatus;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;

/** The tenant directory in DynamoDB, keyed by tenant; reads are strongly consistent so a revocation counts at once. */
public final class DynamoTenantDirectory implements TenantDirectory {
    /** What a {@link io.poisonguard.ledger.StoreUnavailable} names when this table does not answer. */
    private static final String STORE = "the tenant directory";
    private final DynamoDbClient dynamo;
    private final String table;

    public DynamoTenantDirectory(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    @Override
    public Optional<Tenant> find(String tenant) {
        Map<String, AttributeValue> item = Unavailability.read(STORE, () -> dynamo.getItem(b -> b.tableName(table)
                .key(Map.of("tenant", Attrs.s(tenant))).consistentRead(true)).item());
        if (item == null || item.isEmpty()) {
            return Optional.empty();
        }
        AttributeValue types = item.get("jobTypes");
        return Optional.of(new Tenant(tenant, TenantStatus.valueOf(Attrs.str(item, "status")),
                types == null || !types.hasL() ? new HashSet<>() : new HashSet<>(types.l().stream().map(AttributeValue::s).toList()),
                Attrs.instantMillis(item, "updatedAt"), Attrs.str(item, "updatedBy")));
    }

    @Override
    public void put(Tenant t) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("tenant", Attrs.s(t.tenant()));
        item.put("status", Attrs.s(t.status().name()));
        item.put("jobTypes", AttributeValue.fromL(t.jobTypes().stream().sorted().map(Attrs::s).toList()));
        item.put("updatedAt", Attrs.millis(t.updatedAt()));
        item.put("updatedBy", Attrs.s(t.updatedBy()));
        Unavailability.write(STORE, () -> dynamo.putItem(b -> b.tableName(table).item(item)));
    }
}

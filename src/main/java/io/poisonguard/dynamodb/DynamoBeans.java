package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.effects.EffectStore;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineStore;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.time.Clock;

/** Binds the DynamoDB adapters to their ports. */
@ApplicationScoped
public class DynamoBeans {

    @Produces
    @ApplicationScoped
    LedgerStore ledger(DynamoDbClient dynamo, Names names, Clock clock) {
        return new DynamoLedgerStore(dynamo, names.ledgerTable(), clock);
    }

    @Produces
    @ApplicationScoped
    QuarantineStore quarantine(DynamoDbClient dynamo, Names names, Clock clock) {
        return new DynamoQuarantineStore(dynamo, names.quarantineTable(), clock);
    }

    @Produces
    @ApplicationScoped
    TenantDirectory tenants(DynamoDbClient dynamo, Names names) {
        return new DynamoTenantDirectory(dynamo, names.tenantsTable());
    }

    @Produces
    @ApplicationScoped
    AuditLog audit(DynamoDbClient dynamo, Names names) {
        return new DynamoAuditLog(dynamo, names.auditTable());
    }

    @Produces
    @ApplicationScoped
    EffectStore effects(DynamoDbClient dynamo, Names names) {
        return new DynamoEffectStore(dynamo, names.effectsTable());
    }
}

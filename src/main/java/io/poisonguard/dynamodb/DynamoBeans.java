package io.poisonguard.dynamodb;

import io.poisonguard.config.Names;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.vault.PayloadSeal;
import io.poisonguard.vault.PayloadVault;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineStore;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import io.quarkus.arc.ClientProxy;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;

/** Binds the DynamoDB adapters to their ports. */
@ApplicationScoped
public class DynamoBeans {

    /**
     * The ledger is written twice for every message: a singleton over the client itself, so neither call goes
     * through a CDI proxy's bean lookup.
     */
    @Produces
    @Singleton
    LedgerStore ledger(DynamoDbClient dynamo, Names names, Clock clock, io.poisonguard.config.PoisonGuardConfig config) {
        return new DynamoLedgerStore(ClientProxy.unwrap(dynamo), names.ledgerTable(), clock, config.ledger().legacyKeys(),
                config.ledger().itemFormat() == io.poisonguard.config.PoisonGuardConfig.Ledger.ItemFormat.COMPACT)
                .batchingEndings(config.ledger().endingBatchesInFlight());
    }

    @Produces
    @ApplicationScoped
    QuarantineStore quarantine(DynamoDbClient dynamo, Names names, Clock clock, io.poisonguard.config.PoisonGuardConfig config) {
        return new DynamoQuarantineStore(dynamo, names.quarantineTable(), clock, config.opsApi().listingReadBudget(), cursors(config));
    }

    /**
     * The seal of listing cursors: a key derived from the payload vault's, so every replica opens the cursors another gave.
     * With the vault off there is no shared secret: a key of this process, and a cursor is then followed only on the
     * replica that gave it.
     */
    static Cursors cursors(PoisonGuardConfig config) {
        PoisonGuardConfig.PayloadVaultSettings settings = config.payloadVault();
        if (settings.enabled() && settings.key().isPresent()) {
            List<byte[]> previous = new ArrayList<>();
            for (String k : settings.previousKeys().orElse(List.of())) {
                previous.add(decodeKey("poison-guard.payload-vault.previous-keys", k));
            }
            return Cursors.derivedFrom(decodeKey("poison-guard.payload-vault.key", settings.key().get()), previous);
        }
        return Cursors.PROCESS;
    }

    /** The payload vault; a missing or malformed key stops the boot, naming the key. */
    @Produces
    @ApplicationScoped
    PayloadVault payloadVault(DynamoDbClient dynamo, Names names, Clock clock, PoisonGuardConfig config) {
        PoisonGuardConfig.PayloadVaultSettings settings = config.payloadVault();
        if (!settings.enabled()) {
            return PayloadVault.DISABLED;
        }
        String keyName = "poison-guard.payload-vault.key";
        byte[] active = decodeKey(keyName, settings.key().orElseThrow(() -> new ConfigurationException(keyName
                + " is required while poison-guard.payload-vault.enabled=true: 32 random bytes in base64 (openssl rand -base64 32)",
                Set.of(keyName))));
        List<byte[]> previous = new ArrayList<>();
        for (String k : settings.previousKeys().orElse(List.of())) {
            previous.add(decodeKey("poison-guard.payload-vault.previous-keys", k));
        }
        return new DynamoPayloadVault(dynamo, names.payloadsTable(), new PayloadSeal(active, previous), clock);
    }

    private static byte[] decodeKey(String name, String base64) {
        byte[] key;
        try {
            key = Base64.getDecoder().decode(base64.trim());
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(name + " is not base64", Set.of(name));
        }
        if (key.length != 32) {
            throw new ConfigurationException(name + " must decode to 32 bytes (AES-256), it decodes to " + key.length, Set.of(name));
        }
        return key;
    }

    @Produces
    @ApplicationScoped
    TenantDirectory tenants(DynamoDbClient dynamo, Names names) {
        return new DynamoTenantDirectory(dynamo, names.tenantsTable());
    }

    @Produces
    @ApplicationScoped
    io.poisonguard.replay.BulkReplayStore bulkReplays(DynamoDbClient dynamo, Names names, java.time.Clock clock) {
        return new DynamoBulkReplayStore(dynamo, names.bulkReplaysTable(), clock);
    }

    @Produces
    @ApplicationScoped
    io.poisonguard.systemic.GuardBoard guardBoard(DynamoDbClient dynamo, Names names) {
        return new DynamoGuardBoard(dynamo, names.bulkReplaysTable());
    }

    @Produces
    @ApplicationScoped
    io.poisonguard.replay.ReplayQuota replayQuota(DynamoDbClient dynamo, Names names) {
        return new DynamoReplayQuota(dynamo, names.bulkReplaysTable());
    }

    @Produces
    @ApplicationScoped
    AuditLog audit(DynamoDbClient dynamo, Names names, java.time.Clock clock, PoisonGuardConfig config) {
        return new DynamoAuditLog(dynamo, names.auditTable(), clock, cursors(config));
    }

}

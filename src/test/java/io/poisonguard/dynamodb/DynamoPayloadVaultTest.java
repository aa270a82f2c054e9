package io.poisonguard.dynamodb;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.config.Names;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadSeal;
import io.poisonguard.vault.VaultUnreadable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The vault on the DynamoDB wire (dynalite): whole payloads up to SQS's 1 MiB, by key, never half a write. */
class DynamoPayloadVaultTest {
    static DynamoDbClient dynamo;
    static DynamoPayloadVault vault;
    static Names names;

    @BeforeAll
    static void table() {
        dynamo = EmulatorClients.dynamo(Emulators.shared());
        names = new Names("vlt" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        byte[] key = new byte[32];
        Arrays.fill(key, (byte) 7);
        vault = new DynamoPayloadVault(dynamo, names.payloadsTable(), new PayloadSeal(key, List.of()), Clock.systemUTC());
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private static KeptPayload payload(String jobId, String body, Instant expiresAt) {
        return new KeptPayload(new JobKey("acme", jobId), 1, body, Map.of("job-id", MessageAttribute.string(jobId)), expiresAt);
    }

    @Test
    void aOneMebibytePayloadThatDoesNotCompressIsKeptInPartsAndReadBackWhole() {
        byte[] noise = new byte[780_000];
        new SecureRandom().nextBytes(noise);
        String body = Base64.getEncoder().encodeToString(noise); // 1,040,000 characters, incompressible
        vault.keep(payload("big-1", body, Instant.now().plusSeconds(3600)));
        List<Map<String, AttributeValue>> parts = dynamo.query(b -> b.tableName(names.payloadsTable())
                .keyConditionExpression("jobId = :j").expressionAttributeValues(Map.of(":j", AttributeValue.fromS("acme/big-1")))).items();
        assertTrue(parts.size() >= 3, "spread over several items: " + parts.size());
        assertEquals(body, vault.find(new JobKey("acme", "big-1")).orElseThrow().body());
    }

    /**
     * The first payload kept for a generation stands: a later keep of the same generation replaces nothing. An entry left
     * torn (a part of another write under its head, as two first keeps at once can leave one) is written whole again by
     * the next keep, instead of standing unreadable for its whole retention.
     */
    @Test
    void aLaterKeepOfTheSameGenerationReplacesNothingButATornEntryIsWrittenWholeAgain() {
        byte[] noise = new byte[600_000];
        new SecureRandom().nextBytes(noise);
        String first = Base64.getEncoder().encodeToString(noise);
        JobKey key = new JobKey("acme", "kept-once");
        vault.keep(payload("kept-once", first, Instant.now().plusSeconds(3600)));
        vault.keep(payload("kept-once", "a later copy", Instant.now().plusSeconds(3600)));
        assertEquals(first, vault.find(key).orElseThrow().body(), "the later keep replaced the first payload");

        dynamo.updateItem(b -> b.tableName(names.payloadsTable()).key(Map.of("jobId", AttributeValue.fromS("acme/kept-once"),
                "part", AttributeValue.fromN("1"))).updateExpression("SET #w = :other")
                .expressionAttributeNames(Map.of("#w", "write")).expressionAttributeValues(Map.of(":other", AttributeValue.fromS("another-write"))));
        assertThrows(VaultUnreadable.class, () -> vault.find(key), "torn");
        vault.keep(payload("kept-once", first, Instant.now().plusSeconds(3600)));
        assertEquals(first, vault.find(key).orElseThrow().body(), "the torn entry was written whole again");
    }

    @Test
    void aMissingPartIsUnreadableNotAbsentAndADiscardedEntryIsAbsent() {
        byte[] noise = new byte[600_000];
        new SecureRandom().nextBytes(noise);
        vault.keep(payload("torn-1", Base64.getEncoder().encodeToString(noise), Instant.now().plusSeconds(3600)));
        dynamo.deleteItem(b -> b.tableName(names.payloadsTable()).key(Map.of("jobId", AttributeValue.fromS("acme/torn-1"),
                "part", AttributeValue.fromN("1"))));
        assertThrows(VaultUnreadable.class, () -> vault.find(new JobKey("acme", "torn-1")), "an entry with a part missing proves nothing either way");
        vault.discard(new JobKey("acme", "torn-1"), Integer.MAX_VALUE);
        assertTrue(vault.find(new JobKey("acme", "torn-1")).isEmpty());
        vault.discard(new JobKey("acme", "torn-1"), Integer.MAX_VALUE);
    }

    @Test
    void anExpiredEntryIsGoneEvenBeforeDynamoDbDeletesIt() {
        vault.keep(payload("old-1", "{}", Instant.now().minusSeconds(1)));
        assertTrue(vault.find(new JobKey("acme", "old-1")).isEmpty());
        assertTrue(vault.find(new JobKey("acme", "never-kept")).isEmpty());
    }

    @Test
    void keepingAgainReplacesTheEntry() {
        vault.keep(payload("again-1", "first", Instant.now().plusSeconds(3600)));
        vault.keep(new KeptPayload(new JobKey("acme", "again-1"), 2, "second", Map.of(), Instant.now().plusSeconds(3600)));
        KeptPayload p = vault.find(new JobKey("acme", "again-1")).orElseThrow();
        assertEquals("second", p.body());
        assertEquals(2, p.generation());
    }

    @Test
    void discardAfterAReplayKeepsAnEntryALaterQuarantineWroteMeanwhile() {
        // A replay sent generation 2; its copy ran, failed and was quarantined again before the replay cleaned up.
        vault.keep(new KeptPayload(new JobKey("acme", "race-1"), 2, "generation two", Map.of(), Instant.now().plusSeconds(3600)));
        vault.discard(new JobKey("acme", "race-1"), 2);
        assertEquals("generation two", vault.find(new JobKey("acme", "race-1")).orElseThrow().body(), "the newer entry stays");
        vault.discard(new JobKey("acme", "race-1"), 3);
        assertTrue(vault.find(new JobKey("acme", "race-1")).isEmpty());
    }
}

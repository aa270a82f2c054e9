package io.poisonguard.dynamodb;

import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadSeal;
import io.poisonguard.vault.PayloadVault;
import io.poisonguard.vault.VaultUnreadable;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

import java.io.ByteArrayOutputStream;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The payload vault in DynamoDB: one partition per job id, its sealed bytes split into parts under a
 * numeric sort key (an item holds at most 400 KB; an SQS message may be 1 MiB). Part 0 is written last
 * and names how many parts there are and which write they belong to, so a reader never mistakes a
 * half-written entry for a whole one. Items carry the quarantine record's expiry as their TTL.
 */
public final class DynamoPayloadVault implements PayloadVault {
    static final String KEY = "jobId";
    static final String PART = "part";
    /** Sealed bytes per item: well under the 400 KB item limit with room for the other attributes. */
    static final int CHUNK = 350_000;

    private final DynamoDbClient dynamo;
    private final String table;
    private final PayloadSeal seal;
    private final Clock clock;

    public DynamoPayloadVault(DynamoDbClient dynamo, String table, PayloadSeal seal, Clock clock) {
        this.dynamo = dynamo;
        this.table = table;
        this.seal = seal;
        this.clock = clock;
    }

    @Override
    public boolean enabled() {
        return true;
    }

    /**
     * Keeps the payload unless an entry of its generation or a later one is there and has not expired: the first copy
     * kept for a quarantine is the one its record describes. A later copy under the same key (a producer's resend, a
     * dead-letter copy moved back with its labels and fewer attributes, a sender forging the id) replaces nothing. The
     * head's write is conditional too, so of two first keeps at once one stands; of a payload over one part, the other's
     * parts may then have been overwritten: a later keep finds the entry torn (a part of another write) and writes it
     * whole again. (Until one comes, a replay or payload view finds it unreadable and says so, never that it is gone.)
     */
    @Override
    public void keep(KeptPayload p) {
        String storageKey = p.key().storage();
        Instant now = clock.instant();
        Map<String, AttributeValue> current = Unavailability.read("the payload vault", () -> dynamo.getItem(b -> b.tableName(table)
                .consistentRead(true).key(Map.of(KEY, Attrs.s(storageKey), PART, Attrs.n(0))))).item();
        String torn = null;
        if (current != null && !current.isEmpty() && keptAlready(current, p.generation(), now)) {
            if (whole(storageKey, current)) {
                return;
            }
            // Two first keeps of a payload over one part at once: one's head stands over the other's parts. Written again
            // whole, in place of the torn entry (its head's write id is the condition).
            torn = Attrs.str(current, "write");
        }
        String tornWrite = torn;
        // The associated data is the scoped key: an entry moved under another tenant's key does not open.
        byte[] sealed = seal.seal(storageKey, p.body(), p.attributes());
        int parts = Math.max(1, (sealed.length + CHUNK - 1) / CHUNK);
        String write = UUID.randomUUID().toString();
        for (int i = parts - 1; i >= 0; i--) {
            int from = i * CHUNK;
            Map<String, AttributeValue> item = new HashMap<>();
            item.put(KEY, Attrs.s(p.key().storage()));
            item.put(PART, Attrs.n(i));
            item.put("write", Attrs.s(write));
            item.put("data", AttributeValue.fromB(SdkBytes.fromByteArray(java.util.Arrays.copyOfRange(sealed, from,
                    Math.min(sealed.length, from + CHUNK)))));
            item.put(TableBootstrap.TTL_ATTRIBUTE, Attrs.epochSeconds(p.expiresAt()));
            if (i == 0) {
                item.put("parts", Attrs.n(parts));
                item.put("length", Attrs.n(sealed.length));
                item.put("generation", Attrs.n(p.generation()));
                item.put("keptAt", Attrs.millis(clock.instant()));
            }
            if (i > 0) {
                Unavailability.write("the payload vault", () -> dynamo.putItem(b -> b.tableName(table).item(item)));
                continue;
            }
            try {
                Unavailability.write("the payload vault", () -> dynamo.putItem(b -> b.tableName(table).item(item)
                        .conditionExpression("attribute_not_exists(#k) OR #g < :g OR #ttl <= :now OR #w = :w OR #w = :torn")
                        .expressionAttributeNames(Map.of("#k", KEY, "#g", "generation", "#ttl", TableBootstrap.TTL_ATTRIBUTE, "#w", "write"))
                        .expressionAttributeValues(Map.of(":g", Attrs.n(p.generation()), ":now", Attrs.epochSeconds(now),
                                ":w", Attrs.s(write), ":torn", Attrs.s(tornWrite == null ? write : tornWrite)))));
            } catch (ConditionalCheckFailedException keptMeanwhile) {
                // Another keep of this generation landed first (or this write landed and the SDK sent it again: same write id
                // passes). Either way the entry stands whole under its own write id.
                return;
            }
        }
    }

    /** Whether every part of the entry under {@code storageKey} belongs to the write its head {@code head} names. */
    private boolean whole(String storageKey, Map<String, AttributeValue> head) {
        Integer parts = Attrs.integer(head, "parts");
        if (parts == null || parts <= 1) {
            return true;
        }
        String write = Attrs.str(head, "write");
        long matching = query(storageKey, true).stream().filter(i -> Attrs.integer(i, PART) < parts && write.equals(Attrs.str(i, "write"))).count();
        return matching == parts;
    }

    /** Whether the head {@code head} holds an entry of {@code generation} or later that has not expired. */
    private static boolean keptAlready(Map<String, AttributeValue> head, int generation, Instant now) {
        Instant expiresAt = Attrs.instantSeconds(head, TableBootstrap.TTL_ATTRIBUTE);
        Integer kept = Attrs.integer(head, "generation");
        return kept != null && kept >= generation && (expiresAt == null || expiresAt.isAfter(now));
    }

    @Override
    public Optional<KeptPayload> find(JobKey key) {
        List<Map<String, AttributeValue>> found = query(key.storage());
        if (found.isEmpty() && key.tenant() != null) {
            // An entry kept before keys were scoped by tenant: under the bare job id, sealed with it; this tenant's only.
            return open(key.jobId(), query(key.jobId()), key)
                    .filter(p -> p.attributes().containsKey(WireAttributes.TENANT)
                            && key.tenant().equals(p.attributes().get(WireAttributes.TENANT).stringValue()));
        }
        return open(key.storage(), found, key);
    }

    private Optional<KeptPayload> open(String storageKey, List<Map<String, AttributeValue>> found, JobKey key) {
        String jobId = key.jobId();
        Map<Integer, Map<String, AttributeValue>> items = new TreeMap<>();
        for (Map<String, AttributeValue> item : found) {
            items.put(Attrs.integer(item, PART), item);
        }
        Map<String, AttributeValue> head = items.get(0);
        if (head == null) {
            return Optional.empty();
        }
        Instant expiresAt = Attrs.instantSeconds(head, TableBootstrap.TTL_ATTRIBUTE);
        if (expiresAt != null && !expiresAt.isAfter(clock.instant())) {
            // DynamoDB deletes expired items within days, not at once: past its expiry the payload is gone.
            return Optional.empty();
        }
        int parts = Attrs.integer(head, "parts");
        String write = Attrs.str(head, "write");
        ByteArrayOutputStream sealed = new ByteArrayOutputStream((int) Attrs.lng(head, "length", 0));
        for (int i = 0; i < parts; i++) {
            Map<String, AttributeValue> part = items.get(i);
            if (part == null || !write.equals(Attrs.str(part, "write"))) {
                throw new VaultUnreadable("vault entry of job " + jobId + " is incomplete or being rewritten (part " + i + " of " + parts + ")");
            }
            sealed.writeBytes(part.get("data").b().asByteArray());
        }
        if (sealed.size() != Attrs.lng(head, "length", -1)) {
            throw new VaultUnreadable("vault entry of job " + jobId + " has " + sealed.size() + " bytes where its head says "
                    + Attrs.lng(head, "length", -1));
        }
        PayloadSeal.Opened opened = seal.open(storageKey, sealed.toByteArray());
        return Optional.of(new KeptPayload(key, Attrs.integer(head, "generation"), opened.body(), opened.attributes(), expiresAt));
    }

    @Override
    public void discard(JobKey key, int below) {
        discard(key.storage(), below);
        if (key.tenant() != null) {
            discard(key.jobId(), below, key.tenant());
        }
    }

    private void discard(String jobId, int below) {
        discard(jobId, below, null);
    }

    /** Discards the entry under {@code jobId} (a storage key); with {@code tenant}, a bare-id entry only if it is that tenant's. */
    private void discard(String jobId, int below, String tenant) {
        if (tenant != null) {
            try {
                Optional<KeptPayload> legacy = open(jobId, query(jobId), new JobKey(tenant, jobId));
                MessageAttribute owner = legacy.map(p -> p.attributes().get(WireAttributes.TENANT)).orElse(null);
                if (owner == null || !tenant.equals(owner.stringValue())) {
                    return;
                }
            } catch (VaultUnreadable e) {
                return;
            }
        }
        Map<String, AttributeValue> head = Unavailability.read("the payload vault", () -> dynamo.getItem(b -> b.tableName(table)
                .consistentRead(true).key(Map.of(KEY, Attrs.s(jobId), PART, Attrs.n(0))))).item();
        if (head == null || head.isEmpty()) {
            // No whole entry: stray parts of a write that never finished its head (they expire with their TTL).
            return;
        }
        Integer generation = Attrs.integer(head, "generation");
        if (generation != null && generation >= below) {
            return;
        }
        // Head first, so a reader sees "absent" rather than a torn entry; each delete only matches this
        // write's parts, never those of a keep that replaced it meanwhile.
        AttributeValue write = head.get("write");
        int parts = Attrs.integer(head, "parts");
        for (int i = 0; i < parts; i++) {
            Map<String, AttributeValue> key = Map.of(KEY, Attrs.s(jobId), PART, Attrs.n(i));
            try {
                Unavailability.write("the payload vault", () -> dynamo.deleteItem(b -> b.tableName(table).key(key)
                        .conditionExpression("#w = :w").expressionAttributeNames(Map.of("#w", "write"))
                        .expressionAttributeValues(Map.of(":w", write))));
            } catch (ConditionalCheckFailedException replaced) {
                if (i == 0) {
                    return; // a newer keep replaced the entry between the read and the delete: it stays
                }
            }
        }
    }

    private List<Map<String, AttributeValue>> query(String jobId) {
        return query(jobId, false);
    }

    /** Every item under {@code jobId}; with {@code partsOnly}, only each part's number and write id (not its data). */
    private List<Map<String, AttributeValue>> query(String jobId, boolean partsOnly) {
        List<Map<String, AttributeValue>> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryRequest.Builder req = QueryRequest.builder().tableName(table).consistentRead(true)
                    .keyConditionExpression("#k = :k").expressionAttributeValues(Map.of(":k", Attrs.s(jobId)));
            if (partsOnly) {
                req.projectionExpression("#p, #w").expressionAttributeNames(Map.of("#k", KEY, "#p", PART, "#w", "write"));
            } else {
                req.expressionAttributeNames(Map.of("#k", KEY));
            }
            if (start != null) {
                req.exclusiveStartKey(start);
            }
            QueryResponse page = Unavailability.read("the payload vault", () -> dynamo.query(req.build()));
            out.addAll(page.items());
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }
}

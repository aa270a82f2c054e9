package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerConflict;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The ledger in DynamoDB: one item per job, keyed by {@link JobKey#storage()} (tenant and job id). A new
 * job's first write is a conditional PutItem (no item stored, or an expired one); every later write is a
 * single write that bumps {@code version} on the condition of the version the caller read. An item within
 * one write unit (1 KB: every healthy job's) whose stored image this store read or wrote is put whole;
 * a larger one is updated by what changed since that version (an appended history entry by
 * {@code list_append}, the ending attempt's entry by its index), and one whose image it does not hold is
 * updated attribute by attribute. The version condition makes all three equally safe.
 *
 * <p>An item is stored in one of two formats: one attribute per field, or {@linkplain CompactLedgerItem compact}
 * (version, expiry and history as attributes, the other fields as one JSON string). Both are always read; a write
 * stores the item in this store's format and removes the other format's attributes.
 */
public final class DynamoLedgerStore implements LedgerStore {
    static final String KEY = "jobId";
    static final String TTL = "expiresAt";

    /** Item images this store read or wrote lately, by job id and version: the base a partial write diffs against. */
    private static final int KNOWN_IMAGES = 1024;

    private final DynamoDbClient dynamo;
    private final String table;
    private final Clock clock;
    private final Map<String, Map<String, AttributeValue>> known = new java.util.LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, AttributeValue>> eldest) {
            return size() > KNOWN_IMAGES;
        }
    };

    private final boolean legacyKeys;
    private final long wholeItemsUpTo;
    private final boolean compact;
    /** Succeeded endings' batches; null when every ending is written on its own (see {@link #batchingEndings}). */
    private volatile EndingBatcher endings;

    public DynamoLedgerStore(DynamoDbClient dynamo, String table, Clock clock) {
        this(dynamo, table, clock, false);
    }

    /** {@code legacyKeys}: whether a miss also looks for an item keyed by the bare job id (written before tenant scoping). */
    public DynamoLedgerStore(DynamoDbClient dynamo, String table, Clock clock, boolean legacyKeys) {
        this(dynamo, table, clock, legacyKeys, WRITE_UNIT, false);
    }

    /**
     * {@code compact}: whether this store writes the {@linkplain CompactLedgerItem compact item format}; it reads
     * both formats either way, and an item it writes is rewritten in its own format.
     */
    public DynamoLedgerStore(DynamoDbClient dynamo, String table, Clock clock, boolean legacyKeys, boolean compact) {
        this(dynamo, table, clock, legacyKeys, WRITE_UNIT, compact);
    }

    /** {@code wholeItemsUpTo}: the largest item (in bytes) written whole; 0 updates every item by its changes. */
    DynamoLedgerStore(DynamoDbClient dynamo, String table, Clock clock, boolean legacyKeys, long wholeItemsUpTo) {
        this(dynamo, table, clock, legacyKeys, wholeItemsUpTo, false);
    }

    DynamoLedgerStore(DynamoDbClient dynamo, String table, Clock clock, boolean legacyKeys, long wholeItemsUpTo, boolean compact) {
        this.dynamo = dynamo;
        this.table = table;
        this.clock = clock;
        this.legacyKeys = legacyKeys;
        this.wholeItemsUpTo = wholeItemsUpTo;
        this.compact = compact;
    }

    /**
     * Writes succeeded endings in batches (see {@link #writeSucceeded}), at most {@code onTheWire} batches at once; 0 writes
     * each on its own.
     */
    public DynamoLedgerStore batchingEndings(int onTheWire) {
        this.endings = onTheWire > 0 ? new EndingBatcher(this::putAll, KEY, clock, onTheWire) : null;
        return this;
    }

    /** Puts whole items in one BatchWriteItem, and answers those DynamoDB left unprocessed. */
    private List<Map<String, AttributeValue>> putAll(List<Map<String, AttributeValue>> items, java.time.Duration callTimeout) {
        List<WriteRequest> puts = new ArrayList<>(items.size());
        for (Map<String, AttributeValue> item : items) {
            puts.add(WriteRequest.builder().putRequest(PutRequest.builder().item(item).build()).build());
        }
        BatchWriteItemResponse answer = Unavailability.write(StoreUnavailable.LEDGER, () -> dynamo.batchWriteItem(
                BatchWriteItemRequest.builder().requestItems(Map.of(table, puts)).overrideConfiguration(o -> o.apiCallTimeout(callTimeout))
                        .build()));
        List<Map<String, AttributeValue>> left = new ArrayList<>();
        for (WriteRequest w : answer.unprocessedItems().getOrDefault(table, List.of())) {
            if (w.putRequest() != null) {
                left.add(w.putRequest().item());
            }
        }
        return left;
    }

    @Override
    public Optional<LedgerRecord> find(JobKey key) {
        Map<String, AttributeValue> item = read(key.storage());
        if (absent(item)) {
            return legacy(key);
        }
        LedgerRecord r = decode(item);
        remember(key.storage(), r, item);
        return Optional.of(r);
    }

    private boolean absent(Map<String, AttributeValue> item) {
        return item == null || item.isEmpty() || Attrs.expired(item, TTL, clock.instant());
    }

    /**
     * An item written before keys were scoped by tenant is keyed by the bare job id. One of this tenant's is
     * moved to its scoped key (a conditional put, then the old item goes) and answered; one of another
     * tenant's is answered as it is, so the intake can refuse the copy as a tenant mismatch. One under a live
     * lease is answered unmoved: an older release's worker runs it and writes its bare item, so a copy here waits on
     * that lease. One the older release writes while it is being moved is moved again from what it wrote.
     */
    private Optional<LedgerRecord> legacy(JobKey key) {
        if (!legacyKeys) {
            return Optional.empty();
        }
        for (int round = 0; round < LEGACY_MOVE_ROUNDS; round++) {
            Map<String, AttributeValue> old = read(key.jobId());
            if (absent(old)) {
                return Optional.empty();
            }
            LedgerRecord r = decode(old);
            if (r.tenant() == null && key.tenant() != null) {
                return Optional.empty();
            }
            if (!r.jobId().equals(key.jobId())) {
                // Not a bare item: another tenant's scoped one, whose key this job id spells ("acme/job-1" is acme's job-1).
                return Optional.empty();
            }
            if (!key.owns(r) || (r.state() == io.poisonguard.ledger.JobState.ACTIVE && r.leaseHeldAt(clock.instant()))) {
                return Optional.of(r);
            }
            Map<String, AttributeValue> moved = new HashMap<>(old);
            moved.put(KEY, Attrs.s(key.storage()));
            try {
                Unavailability.write(StoreUnavailable.LEDGER, () -> dynamo.putItem(b -> b.tableName(table).item(moved)
                        .conditionExpression("attribute_not_exists(#key)").expressionAttributeNames(Map.of("#key", KEY))));
            } catch (ConditionalCheckFailedException raced) {
                // Another worker moved it: read what the scoped key holds now.
                Map<String, AttributeValue> now = read(key.storage());
                return absent(now) ? Optional.empty() : Optional.of(decode(now));
            }
            try {
                Unavailability.write(StoreUnavailable.LEDGER, () -> dynamo.deleteItem(b -> b.tableName(table).key(Map.of(KEY, Attrs.s(key.jobId())))
                        .conditionExpression("#version = :v").expressionAttributeNames(Map.of("#version", "version"))
                        .expressionAttributeValues(Map.of(":v", Attrs.n(r.version())))));
            } catch (ConditionalCheckFailedException changed) {
                // The old item was written after the copy was made: the copy is stale. Take it back, unless someone has
                // written on it already (then it is theirs and current), and move again from what the old item holds.
                try {
                    Unavailability.write(StoreUnavailable.LEDGER, () -> dynamo.deleteItem(b -> b.tableName(table).key(Map.of(KEY, Attrs.s(key.storage())))
                            .conditionExpression("#version = :v").expressionAttributeNames(Map.of("#version", "version"))
                            .expressionAttributeValues(Map.of(":v", Attrs.n(r.version())))));
                } catch (ConditionalCheckFailedException written) {
                    Map<String, AttributeValue> now = read(key.storage());
                    return absent(now) ? Optional.empty() : Optional.of(decode(now));
                }
                continue;
            }
            remember(key.storage(), r, moved);
            return Optional.of(r);
        }
        // Still being written under the move: answer the old item as it is now, unmoved (a write on it conflicts and is
        // decided again).
        Map<String, AttributeValue> old = read(key.jobId());
        return absent(old) ? Optional.empty() : Optional.of(decode(old));
    }

    /** How often a read moves an old item that keeps changing under the move before it answers it unmoved. */
    private static final int LEGACY_MOVE_ROUNDS = 3;

    private static String imageKey(String storageKey, long version) {
        return version + "@" + storageKey;
    }

    /**
     * Keeps an item image as the base of this job's next write, unless none can follow: a finished job
     * (succeeded, dropped, resolved) is never written again, so its image would only sit in
     * memory until pushed out, long enough to be copied by every young collection meanwhile.
     */
    private void remember(String storageKey, LedgerRecord stored, Map<String, AttributeValue> image) {
        if (stored.state() != null && stored.state().next().isEmpty()) {
            return;
        }
        keepImage(storageKey, stored.version(), image);
    }

    /** Keeps {@code image} as the stored item at {@code version}, the base a next write on that version diffs against. */
    private void keepImage(String storageKey, long version, Map<String, AttributeValue> image) {
        synchronized (known) {
            known.put(imageKey(storageKey, version), image);
        }
    }

    /** Images kept as bases for a next write (for tests). */
    int imagesKept() {
        synchronized (known) {
            return known.size();
        }
    }

    private Map<String, AttributeValue> knownImage(String storageKey, long version) {
        synchronized (known) {
            return known.remove(imageKey(storageKey, version));
        }
    }

    private Map<String, AttributeValue> read(String storageKey) {
        return Unavailability.read(StoreUnavailable.LEDGER, () -> dynamo.getItem(GetItemRequest.builder()
                .tableName(table).key(Map.of(KEY, Attrs.s(storageKey))).consistentRead(true).build()).item());
    }

    @Override
    public LedgerRecord write(LedgerRecord next) {
        Map<String, String> names = new HashMap<>();
        Map<String, AttributeValue> values = new HashMap<>();
        List<String> sets = new ArrayList<>();
        List<String> removes = new ArrayList<>();
        LedgerRecord written = next.withVersion(next.version() + 1);
        Map<String, AttributeValue> attrs = encoded(written);
        String storageKey = JobKey.of(next).storage();
        Map<String, AttributeValue> whole = new HashMap<>(attrs);
        whole.put(KEY, Attrs.s(storageKey));
        if (next.version() == 0) {
            // A new job's item: put on the condition that none is stored (or the stored one has expired).
            return put(next, storageKey, whole, "attribute_not_exists(#key) OR #expiresAt <= :now",
                    Map.of("#key", KEY, "#expiresAt", TTL), Map.of(":now", Attrs.epochSeconds(clock.instant())));
        }
        Map<String, AttributeValue> base = knownImage(storageKey, next.version());
        if (wholeItemWrite(base, whole)) {
            return put(next, storageKey, whole, "#version = :expected", Map.of("#version", "version"),
                    Map.of(":expected", Attrs.n(next.version())));
        }
        for (String name : compact ? CompactLedgerItem.ATTRIBUTES : ALL) {
            AttributeValue v = attrs.get(name);
            AttributeValue was = base == null ? null : base.get(name);
            if (base != null && java.util.Objects.equals(v, was)) {
                continue;
            }
            names.put("#" + name, name);
            if (v == null) {
                removes.add("#" + name);
            } else if (base != null && name.equals("history") && was != null) {
                sets.add(historyUpdate(was.l(), v.l(), values));
            } else {
                values.put(":" + name, v);
                sets.add("#" + name + " = :" + name);
            }
        }
        // The other format's attributes go, so the item is read back in this store's format.
        for (String name : compact ? ATTRIBUTES_ONLY : List.of(CompactLedgerItem.RECORD)) {
            if (base == null || base.containsKey(name)) {
                names.put("#" + name, name);
                removes.add("#" + name);
            }
        }
        values.put(":expected", Attrs.n(next.version()));
        String condition = "#version = :expected";
        String update = "SET " + String.join(", ", sets) + (removes.isEmpty() ? "" : " REMOVE " + String.join(", ", removes));
        try {
            Unavailability.write(StoreUnavailable.LEDGER, () -> dynamo.updateItem(UpdateItemRequest.builder()
                    .tableName(table)
                    .key(Map.of(KEY, Attrs.s(storageKey)))
                    .updateExpression(update)
                    .conditionExpression(condition)
                    .expressionAttributeNames(names)
                    .expressionAttributeValues(values)
                    // DynamoDB returns the item that failed the condition; an emulator that does not is read instead.
                    .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                    .build()));
        } catch (ConditionalCheckFailedException e) {
            ownWriteOrConflict(e, next, storageKey, attrs);
        }
        if (base != null) {
            // The item now holds what this write set and whatever the image held that this release does not write (an
            // attribute a newer release added): the image keeps those too, so the next write updates again instead of
            // putting the whole item over them. Without an image nothing is known of them, and nothing is remembered.
            Map<String, AttributeValue> image = new HashMap<>(attrs);
            base.forEach((name, value) -> {
                if (!name.equals(KEY) && !ALL.contains(name) && !name.equals(CompactLedgerItem.RECORD)) {
                    image.put(name, value);
                }
            });
            remember(storageKey, written, image);
        }
        return written;
    }

    /** {@code written}'s attributes in this store's format (the key aside). */
    private Map<String, AttributeValue> encoded(LedgerRecord written) {
        Map<String, AttributeValue> attrs = compact ? encodeCompact(written) : encode(written);
        if (!compact) {
            // The write's token is a digest of what it writes, so the same write sent again (the SDK
            // retrying after a lost response, or our caller retrying after an outage) is recognised as
            // its own when its condition fails, instead of being taken for a conflict. A compact item is
            // recognised by its record text itself (see ownWrite).
            attrs.put(WRITE_TOKEN, Attrs.s(token(attrs)));
        }
        return attrs;
    }

    /**
     * A succeeded attempt's ending, put whole in a {@code BatchWriteItem} with other jobs' endings when it can go before
     * {@code unfencedUntil} (and the item is one this store would put whole); otherwise, or when the batch did not write
     * it, {@link #write} with the version condition. The condition is what keeps a writer from overwriting a newer
     * attempt's record; while the writer's lease holds no other worker writes an ACTIVE item (another copy waits, the
     * dead-letter intake leaves it be, operator actions refuse it), so until well before the lease runs out the
     * condition protects nothing and the ending can share a request.
     */
    @Override
    public LedgerRecord writeSucceeded(LedgerRecord next, Instant unfencedUntil) {
        if (endings == null || next.state() != JobState.SUCCEEDED || next.version() == 0 || !clock.instant().isBefore(unfencedUntil)) {
            return write(next);
        }
        LedgerRecord written = next.withVersion(next.version() + 1);
        Map<String, AttributeValue> attrs = encoded(written);
        String storageKey = JobKey.of(next).storage();
        Map<String, AttributeValue> whole = new HashMap<>(attrs);
        whole.put(KEY, Attrs.s(storageKey));
        Map<String, AttributeValue> base = knownImage(storageKey, next.version());
        if (!wholeItemWrite(base, whole) || endings.put(whole, unfencedUntil) != EndingBatcher.Result.WRITTEN) {
            // The conditional write diffs against the same image.
            if (base != null) {
                keepImage(storageKey, next.version(), base);
            }
            return write(next);
        }
        remember(storageKey, written, whole);
        return written;
    }

    /**
     * Whether the write goes as the whole item: its stored image is known to hold nothing this release does
     * not write (an attribute a newer release added survives only an update), and the new item is under one
     * write unit (1 KB), where DynamoDB charges a put and an update alike and the put carries no update
     * expression for the server to parse and apply. Larger items are updated by their changes, so a long
     * history is not sent again on every write.
     */
    private boolean wholeItemWrite(Map<String, AttributeValue> base, Map<String, AttributeValue> item) {
        if (base == null) {
            return false;
        }
        for (String name : base.keySet()) {
            if (!name.equals(KEY) && !ALL.contains(name) && !name.equals(CompactLedgerItem.RECORD)) {
                return false;
            }
        }
        return ItemSize.of(item) <= wholeItemsUpTo;
    }

    /** One DynamoDB write unit: items up to this size cost the same whichever way they are written. */
    static final int WRITE_UNIT = 1024;

    /**
     * The write as the whole item, put on {@code condition}: a new job's first write (nothing is there to
     * keep, and the item travels without an update expression), or a small item's next version.
     */
    private LedgerRecord put(LedgerRecord next, String storageKey, Map<String, AttributeValue> item, String condition,
                             Map<String, String> names, Map<String, AttributeValue> values) {
        try {
            Unavailability.write(StoreUnavailable.LEDGER, () -> dynamo.putItem(PutItemRequest.builder()
                    .tableName(table)
                    .item(item)
                    .conditionExpression(condition)
                    .expressionAttributeNames(names)
                    .expressionAttributeValues(values)
                    // DynamoDB returns the item that failed the condition; an emulator that does not is read instead.
                    .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                    .build()));
        } catch (ConditionalCheckFailedException e) {
            ownWriteOrConflict(e, next, storageKey, item);
        }
        LedgerRecord written = next.withVersion(next.version() + 1);
        remember(storageKey, written, item);
        return written;
    }

    /**
     * A failed condition is our own write sent again (the SDK retrying after a lost response, or our caller
     * after an outage) when the stored item is what it wrote; otherwise a conflict.
     */
    private void ownWriteOrConflict(ConditionalCheckFailedException e, LedgerRecord next, String storageKey, Map<String, AttributeValue> attrs) {
        Map<String, AttributeValue> stored;
        try {
            stored = e.hasItem() ? e.item() : read(storageKey);
        } catch (StoreUnavailable unread) {
            // The condition failed, maybe on a retry of this very write that landed: without the stored item, the write's
            // outcome is not known (a start that landed must be settled, not forgotten).
            throw new StoreUnavailable(StoreUnavailable.LEDGER, true,
                    unread.getCause() == null ? unread : unread.getCause());
        }
        if (stored == null || !ownWrite(stored, attrs)) {
            throw new LedgerConflict(next.jobId(), next.version());
        }
    }

    /**
     * Whether {@code stored} is the write {@code attrs}: by its token (the attribute format), or for a compact
     * item by its version, record text and history, which together hold every field of the record. The record
     * text carries the writer's lease and the millisecond of the write, as the token's digest does.
     */
    static boolean ownWrite(Map<String, AttributeValue> stored, Map<String, AttributeValue> attrs) {
        AttributeValue token = attrs.get(WRITE_TOKEN);
        if (token != null) {
            return token.equals(stored.get(WRITE_TOKEN));
        }
        return attrs.get(CompactLedgerItem.RECORD).equals(stored.get(CompactLedgerItem.RECORD))
                && attrs.get("version").equals(stored.get("version"))
                && java.util.Objects.equals(attrs.get("history"), stored.get("history"));
    }

    /**
     * The update of the history list from {@code was} to {@code now}: new entries appended, or the newest
     * entry replaced in place, or (when entries were dropped off the front) the whole list.
     */
    static String historyUpdate(List<AttributeValue> was, List<AttributeValue> now, Map<String, AttributeValue> values) {
        int kept = was.size();
        if (now.size() > kept && now.subList(0, kept).equals(was)) {
            values.put(":historyAdded", AttributeValue.fromL(now.subList(kept, now.size())));
            return "#history = list_append(#history, :historyAdded)";
        }
        if (now.size() == kept && kept > 0 && now.subList(0, kept - 1).equals(was.subList(0, kept - 1))) {
            values.put(":historyLast", now.get(kept - 1));
            return "#history[" + (kept - 1) + "] = :historyLast";
        }
        values.put(":history", AttributeValue.fromL(now));
        return "#history = :history";
    }

    static final String WRITE_TOKEN = "writeToken";

    /** A fresh SHA-256 digest is cloned from this one: cheaper than looking the algorithm up for every write. */
    private static final java.security.MessageDigest SHA256;

    static {
        try {
            SHA256 = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String token(Map<String, AttributeValue> attrs) {
        java.security.MessageDigest digest;
        try {
            digest = (java.security.MessageDigest) SHA256.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
        StringBuilder text = new StringBuilder(256);
        // ALL is in a fixed order, so the same attributes always digest the same.
        for (String name : ALL) {
            AttributeValue v = attrs.get(name);
            if (v != null) {
                text.append(name).append('=');
                canonical(v, text);
                text.append('\n');
            }
        }
        digest.update(text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return java.util.HexFormat.of().formatHex(digest.digest(), 0, 16);
    }

    /** A value as text that tells apart every value the ledger writes (strings, numbers, booleans, lists, maps). */
    static void canonical(AttributeValue v, StringBuilder out) {
        if (v.s() != null) {
            out.append('S').append(v.s().length()).append(':').append(v.s());
        } else if (v.n() != null) {
            out.append('N').append(v.n()).append(';');
        } else if (v.bool() != null) {
            out.append(v.bool() ? "T" : "F");
        } else if (v.hasL()) {
            out.append('[');
            v.l().forEach(e -> canonical(e, out));
            out.append(']');
        } else if (v.hasM()) {
            out.append('{');
            new java.util.TreeMap<>(v.m()).forEach((k, e) -> {
                out.append(k.length()).append(':').append(k);
                canonical(e, out);
            });
            out.append('}');
        } else {
            // Types the ledger never writes (binary, sets, null): their full description.
            out.append('?').append(v);
        }
    }

    /** Every attribute besides the key; a null value is removed. */
    private static final List<String> ALL = List.of("tenant", "jobType", "state", "generation", "attempt", "failures",
            "leaseOwner", "leaseUntil", "history", "firstSeen", "updatedAt", "quarantineClass", "quarantineReason",
            "version", TTL, WRITE_TOKEN, "effects");

    /** The attribute format's attributes that the compact format does not have. */
    private static final List<String> ATTRIBUTES_ONLY = ALL.stream()
            .filter(name -> !CompactLedgerItem.ATTRIBUTES.contains(name)).toList();

    /** A record in the compact format: version, expiry and history as attributes, the rest as one JSON string. */
    static Map<String, AttributeValue> encodeCompact(LedgerRecord r) {
        Map<String, AttributeValue> m = new HashMap<>(8);
        m.put("version", Attrs.n(r.version()));
        putIf(m, TTL, r.expiresAt() == null ? null : Attrs.epochSeconds(r.expiresAt()));
        m.put("history", HistoryCodec.encode(r.history()));
        m.put(CompactLedgerItem.RECORD, Attrs.s(CompactLedgerItem.fields(r)));
        return m;
    }

    static Map<String, AttributeValue> encode(LedgerRecord r) {
        Map<String, AttributeValue> m = new HashMap<>();
        putIf(m, "tenant", r.tenant() == null ? null : Attrs.s(r.tenant()));
        putIf(m, "jobType", r.jobType() == null ? null : Attrs.s(r.jobType()));
        putIf(m, "state", r.state() == null ? null : Attrs.s(r.state().name()));
        m.put("generation", Attrs.n(r.generation()));
        m.put("attempt", Attrs.n(r.attempt()));
        // No failures yet (every healthy job): no attribute, so the item stays small.
        if (!r.failures().isEmpty()) {
            Map<String, AttributeValue> failures = new HashMap<>();
            r.failures().forEach((c, n) -> failures.put(c.name(), Attrs.n(n)));
            m.put("failures", AttributeValue.fromM(failures));
        }
        if (!r.effects().isEmpty()) {
            Map<String, AttributeValue> effects = new HashMap<>();
            r.effects().forEach((name, attempt) -> effects.put(name, Attrs.n(attempt)));
            m.put("effects", AttributeValue.fromM(effects));
        }
        putIf(m, "leaseOwner", r.leaseOwner() == null ? null : Attrs.s(r.leaseOwner()));
        putIf(m, "leaseUntil", r.leaseUntil() == null ? null : Attrs.millis(r.leaseUntil()));
        m.put("history", HistoryCodec.encode(r.history()));
        m.put("firstSeen", Attrs.millis(r.firstSeen()));
        m.put("updatedAt", Attrs.millis(r.updatedAt()));
        putIf(m, "quarantineClass", r.quarantineClass() == null ? null : Attrs.s(r.quarantineClass().name()));
        putIf(m, "quarantineReason", r.quarantineReason() == null ? null : Attrs.s(r.quarantineReason()));
        m.put("version", Attrs.n(r.version()));
        putIf(m, TTL, r.expiresAt() == null ? null : Attrs.epochSeconds(r.expiresAt()));
        return m;
    }

    private static void putIf(Map<String, AttributeValue> m, String k, AttributeValue v) {
        if (v != null) {
            m.put(k, v);
        }
    }

    /** A stored item in either format (also for tools that scan the table: its fields are not all attributes). */
    public static LedgerRecord decode(Map<String, AttributeValue> item) {
        return CompactLedgerItem.holds(item) ? decodeCompact(item) : decodeAttributes(item);
    }

    private static LedgerRecord decodeCompact(Map<String, AttributeValue> item) {
        CompactLedgerItem.Fields f = CompactLedgerItem.parse(Attrs.str(item, CompactLedgerItem.RECORD));
        return new LedgerRecord(
                JobKey.fromStorage(Attrs.str(item, KEY), f.tenant).jobId(),
                f.tenant,
                f.jobType,
                f.state,
                f.generation,
                f.attempt,
                f.failures,
                f.leaseOwner,
                f.leaseUntil,
                HistoryCodec.decode(item.get("history")),
                f.firstSeen,
                f.updatedAt,
                f.quarantineClass,
                f.quarantineReason,
                Attrs.lng(item, "version", 0),
                Attrs.instantSeconds(item, TTL),
                f.effects);
    }

    private static LedgerRecord decodeAttributes(Map<String, AttributeValue> item) {
        Map<FailureClass, Integer> failures = new EnumMap<>(FailureClass.class);
        AttributeValue f = item.get("failures");
        if (f != null && f.hasM()) {
            f.m().forEach((k, v) -> failures.put(FailureClass.valueOf(k), Integer.valueOf(v.n())));
        }
        String state = Attrs.str(item, "state");
        String qc = Attrs.str(item, "quarantineClass");
        String tenant = Attrs.str(item, "tenant");
        return new LedgerRecord(
                JobKey.fromStorage(Attrs.str(item, KEY), tenant).jobId(),
                tenant,
                Attrs.str(item, "jobType"),
                state == null ? null : JobState.valueOf(state),
                Attrs.integer(item, "generation"),
                Attrs.integer(item, "attempt"),
                failures,
                Attrs.str(item, "leaseOwner"),
                Attrs.instantMillis(item, "leaseUntil"),
                HistoryCodec.decode(item.get("history")),
                Attrs.instantMillis(item, "firstSeen"),
                Attrs.instantMillis(item, "updatedAt"),
                qc == null ? null : FailureClass.valueOf(qc),
                Attrs.str(item, "quarantineReason"),
                Attrs.lng(item, "version", 0),
                Attrs.instantSeconds(item, TTL),
                effects(item.get("effects")));
    }

    private static Map<String, Integer> effects(AttributeValue v) {
        Map<String, Integer> out = new java.util.HashMap<>();
        if (v != null && v.hasM()) {
            v.m().forEach((name, attempt) -> out.put(name, Integer.valueOf(attempt.n())));
        }
        return out;
    }
}

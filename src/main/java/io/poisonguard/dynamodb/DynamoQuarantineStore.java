package io.poisonguard.dynamodb;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.quarantine.ReplayEntry;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Quarantine records in DynamoDB, keyed by {@link JobKey#storage()} (tenant and job id), with GSIs by
 * failure class, by tenant and by job id (all sorted by quarantine time) and {@code expiresAt} as the TTL attribute. No payload is stored.
 */
public final class DynamoQuarantineStore implements QuarantineStore {
    static final String KEY = "jobId";
    static final String TTL = "expiresAt";
    public static final String BY_CLASS = "by-failure-class";
    public static final String BY_TENANT = "by-tenant";
    public static final String BY_JOB = "by-job-id";
    /** The bare job id, for the by-job-id index (the key holds the tenant too). */
    public static final String JOB = "job";
    /**
     * The tenant attribute of a job that named no valid tenant: the by-tenant index needs a value. On such a record it is
     * a placeholder, never read back as its tenant (a tenant may be named "unknown"): the key says whose a record is.
     */
    static final String NO_TENANT = "unknown";
    /** What a {@link io.poisonguard.ledger.StoreUnavailable} names when this table does not answer. */
    private static final String STORE = "the quarantine table";

    private final DynamoDbClient dynamo;
    private final String table;
    private final Clock clock;
    private final int readBudget;
    private final Cursors cursors;

    /** Most records one listing call reads before it answers (with a cursor to go on from there). */
    public static final int DEFAULT_READ_BUDGET = 1_000;

    /** The last review stage: a record on which it was escalated has nothing left to escalate. */
    static final String LAST_STAGE = io.poisonguard.owners.ReviewStage.RESOLVE.key();
    static final String FIRST_STAGE = io.poisonguard.owners.ReviewStage.ACKNOWLEDGE.key();

    public DynamoQuarantineStore(DynamoDbClient dynamo, String table, Clock clock) {
        this(dynamo, table, clock, DEFAULT_READ_BUDGET);
    }

    public DynamoQuarantineStore(DynamoDbClient dynamo, String table, Clock clock, int readBudget) {
        this(dynamo, table, clock, readBudget, Cursors.PROCESS);
    }

    DynamoQuarantineStore(DynamoDbClient dynamo, String table, Clock clock, int readBudget, Cursors cursors) {
        this.dynamo = dynamo;
        this.table = table;
        this.clock = clock;
        this.readBudget = readBudget;
        this.cursors = cursors;
    }

    @Override
    public boolean putIfAbsent(QuarantineRecord r) {
        return put(r, "attribute_not_exists(jobId) OR generation < :g OR expiresAt <= :now", Map.of(":g", Attrs.n(r.generation())));
    }

    @Override
    public boolean reopen(QuarantineRecord r, Optional<QuarantineRecord> replaced) {
        if (replaced.isEmpty()) {
            return put(r, "attribute_not_exists(jobId) OR expiresAt <= :now", Map.of());
        }
        // Whatever its status: while the ledger says UNRECOVERABLE no operator can replay or resolve the job, so a record
        // that says REPLAYING or REPLAYED is one a replay left before it concluded (its own write to the record lost).
        if (replaced.get().quarantinedAt() == null) {
            // A record from before quarantine times were kept.
            return put(r, "attribute_not_exists(jobId) OR expiresAt <= :now OR (generation = :rg AND attribute_not_exists(quarantinedAt))",
                    Map.of(":rg", Attrs.n(replaced.get().generation())));
        }
        return put(r, "attribute_not_exists(jobId) OR expiresAt <= :now OR (generation = :rg AND quarantinedAt = :rq)",
                Map.of(":rg", Attrs.n(replaced.get().generation()), ":rq", Attrs.millis(replaced.get().quarantinedAt())));
    }

    @Override
    public boolean concludeUnrecoverable(JobKey key, Instant quarantinedAt) {
        return conditional(key, "SET #status = :st", "quarantinedAt = :qa",
                Map.of(":st", Attrs.s(QuarantineStatus.UNRECOVERABLE.name()), ":qa", Attrs.millis(quarantinedAt)), true);
    }

    /** A conditional put of the whole record; true when this call wrote it (or an earlier send of this same put did). */
    private boolean put(QuarantineRecord r, String condition, Map<String, AttributeValue> moreValues) {
        Map<String, AttributeValue> values = new HashMap<>(moreValues);
        values.put(":now", Attrs.epochSeconds(clock.instant()));
        try {
            Unavailability.write(STORE, () -> dynamo.putItem(PutItemRequest.builder()
                    .tableName(table)
                    .item(encode(r))
                    .conditionExpression(condition)
                    .expressionAttributeNames(condition.contains("#status") ? Map.of("#status", "status") : null)
                    .expressionAttributeValues(values)
                    .returnValuesOnConditionCheckFailure(software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure.ALL_OLD)
                    .build()));
            return true;
        } catch (ConditionalCheckFailedException e) {
            // The SDK sends a put again when its answer was lost; the second one fails its condition on the record the
            // first one wrote. That record is this put's (same generation, source message and millisecond), and the
            // caller still has its alert and count to give.
            Map<String, AttributeValue> stored = e.hasItem() && !e.item().isEmpty() ? e.item()
                    : item(JobKey.of(r.tenant(), r.jobId()).storage()).orElse(Map.of());
            return !stored.isEmpty() && java.util.Objects.equals(Attrs.integer(stored, "generation"), r.generation())
                    && java.util.Objects.equals(Attrs.str(stored, "sourceMessageId"), r.sourceMessageId())
                    && java.util.Objects.equals(Attrs.instantMillis(stored, "quarantinedAt"),
                    r.quarantinedAt() == null ? null : r.quarantinedAt().truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        }
    }

    @Override
    public Optional<QuarantineRecord> find(JobKey key) {
        Optional<QuarantineRecord> scoped = read(key.storage());
        // A record written before keys were scoped by tenant is keyed by the bare job id: this tenant's only.
        return scoped.isPresent() ? scoped : readLegacy(key.jobId()).filter(r -> key.tenant() != null && key.tenant().equals(r.tenant()));
    }

    private Optional<QuarantineRecord> read(String storageKey) {
        return item(storageKey).map(DynamoQuarantineStore::decode);
    }

    /**
     * The record kept under a bare job id before keys were scoped (it has no {@value #JOB} attribute), and only such a
     * record: a job id holding a '/' ("acme/job-1") is also another job's scoped key.
     */
    private Optional<QuarantineRecord> readLegacy(String jobId) {
        return item(jobId).filter(stored -> !stored.containsKey(JOB)).map(DynamoQuarantineStore::decode);
    }

    private Optional<Map<String, AttributeValue>> item(String storageKey) {
        Map<String, AttributeValue> item = Unavailability.read(STORE, () -> dynamo.getItem(GetItemRequest.builder()
                .tableName(table).key(Map.of(KEY, Attrs.s(storageKey))).consistentRead(true).build()).item());
        if (item == null || item.isEmpty() || Attrs.expired(item, TTL, clock.instant())) {
            return Optional.empty();
        }
        return Optional.of(item);
    }

    @Override
    public List<JobKey> keysOf(String jobId, Instant now) {
        List<JobKey> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            QueryResponse page = Unavailability.read(STORE, () -> dynamo.query(QueryRequest.builder().tableName(table).indexName(BY_JOB)
                    .keyConditionExpression("#job = :j")
                    .filterExpression("attribute_not_exists(expiresAt) OR expiresAt > :now")
                    .expressionAttributeNames(Map.of("#job", JOB))
                    .expressionAttributeValues(Map.of(":j", Attrs.s(jobId), ":now", Attrs.epochSeconds(now)))
                    .exclusiveStartKey(from).build()));
            page.items().forEach(i -> out.add(keyOf(i)));
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null && out.size() < 100);
        // A record from before scoped keys has no job attribute and is not indexed: found by its bare key.
        if (out.isEmpty()) {
            readLegacy(jobId).map(r -> JobKey.of(r.tenant(), r.jobId())).ifPresent(out::add);
        }
        return out.stream().distinct().toList();
    }

    @Override
    public List<QuarantineRecord> byClass(FailureClass failureClass, Instant now, int limit) {
        List<QuarantineRecord> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            QueryResponse page = Unavailability.read(STORE, () -> dynamo.query(QueryRequest.builder()
                    .tableName(table)
                    .indexName(BY_CLASS)
                    .keyConditionExpression("failureClass = :c")
                    .filterExpression("attribute_not_exists(expiresAt) OR expiresAt > :now")
                    .expressionAttributeValues(Map.of(":c", Attrs.s(failureClass.name()), ":now", Attrs.epochSeconds(now)))
                    .scanIndexForward(true)
                    .exclusiveStartKey(from)
                    .build()));
            for (Map<String, AttributeValue> item : page.items()) {
                if (out.size() < limit) {
                    out.add(decode(item));
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null && out.size() < limit);
        return out;
    }

    @Override
    public QuarantinePage list(QuarantineQuery q, Instant now) {
        try {
            return listPages(q, now);
        } catch (software.amazon.awssdk.services.dynamodb.model.DynamoDbException e) {
            // A cursor that decodes but is not a key of this table or index (tampered, or from another
            // filter) is refused by DynamoDB: a client error, not a server one (a throttle, also a 400, is
            // StoreUnavailable by now).
            if (q.cursor().isPresent() && e.statusCode() == 400) {
                throw new IllegalArgumentException("cursor is not valid for this listing");
            }
            throw e;
        }
    }

    private QuarantinePage listPages(QuarantineQuery q, Instant now) {
        Map<String, AttributeValue> start = q.cursor().map(cursors::decode).orElse(null);
        List<QuarantineRecord> out = new ArrayList<>();
        Map<String, AttributeValue> last;
        int read = 0;
        do {
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":now", Attrs.epochSeconds(now));
            List<String> filters = new ArrayList<>(List.of("(attribute_not_exists(expiresAt) OR expiresAt > :now)"));
            q.jobType().ifPresent(t -> {
                filters.add("jobType = :jt");
                values.put(":jt", Attrs.s(t));
            });
            q.status().ifPresent(st -> {
                filters.add("#status = :st");
                values.put(":st", Attrs.s(st.name()));
            });
            q.quarantinedBefore().ifPresent(t -> {
                filters.add("quarantinedAt <= :before");
                values.put(":before", Attrs.millis(t));
            });
            Map<String, String> names = q.status().isPresent() ? Map.of("#status", "status") : null;
            // A narrow filter must not read the whole table in one call: at most readBudget records are read,
            // then the page answers with what it found and a cursor to go on.
            int pageSize = Math.min(Math.max(q.limit() - out.size(), 1) * 4, readBudget - read);
            List<Map<String, AttributeValue>> items;
            if (q.failureClass().isPresent() || q.tenant().isPresent()) {
                boolean byClass = q.failureClass().isPresent();
                if (byClass && q.tenant().isPresent()) {
                    filters.add("tenant = :tenant");
                    values.put(":tenant", Attrs.s(q.tenant().get()));
                }
                values.put(":k", Attrs.s(byClass ? q.failureClass().get().name() : q.tenant().get()));
                QueryRequest query = QueryRequest.builder().tableName(table)
                        .indexName(byClass ? BY_CLASS : BY_TENANT)
                        .keyConditionExpression((byClass ? "failureClass" : "tenant") + " = :k")
                        .filterExpression(String.join(" AND ", filters))
                        .expressionAttributeNames(names)
                        .expressionAttributeValues(values)
                        .exclusiveStartKey(start).limit(pageSize).build();
                QueryResponse page = Unavailability.read(STORE, () -> dynamo.query(query));
                items = page.items();
                read += page.scannedCount() == null ? items.size() : page.scannedCount();
                last = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
            } else {
                ScanRequest scan = ScanRequest.builder().tableName(table)
                        .filterExpression(String.join(" AND ", filters))
                        .expressionAttributeNames(names)
                        .expressionAttributeValues(values)
                        .exclusiveStartKey(start).limit(pageSize).build();
                ScanResponse page = Unavailability.read(STORE, () -> dynamo.scan(scan));
                items = page.items();
                read += page.scannedCount() == null ? items.size() : page.scannedCount();
                last = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
            }
            for (Map<String, AttributeValue> item : items) {
                QuarantineRecord r = decode(item);
                if (q.tenant().isPresent() && !q.tenant().get().equals(r.tenant())) {
                    // Under the placeholder tenant, the index also holds the records of jobs of no tenant.
                    continue;
                }
                out.add(r);
                if (out.size() == q.limit()) {
                    // Continue right after this item next time, whatever else the page held.
                    last = keyOf(item, q);
                    break;
                }
            }
            start = last;
        } while (start != null && out.size() < q.limit() && read < readBudget);
        return new QuarantinePage(out, start == null ? null : cursors.encode(start));
    }

    private static Map<String, AttributeValue> keyOf(Map<String, AttributeValue> item, QuarantineQuery q) {
        Map<String, AttributeValue> key = new HashMap<>();
        key.put(KEY, item.get(KEY));
        if (q.failureClass().isPresent()) {
            key.put("failureClass", item.get("failureClass"));
            key.put("quarantinedAt", item.get("quarantinedAt"));
        } else if (q.tenant().isPresent()) {
            key.put("tenant", item.get("tenant"));
            key.put("quarantinedAt", item.get("quarantinedAt"));
        }
        return key;
    }

    @Override
    public boolean updateStatus(JobKey key, QuarantineStatus status, Optional<ReplayEntry> replay) {
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":st", Attrs.s(status.name()));
        String update = "SET #status = :st";
        if (replay.isPresent()) {
            values.put(":r", replays(List.of(replay.get())));
            values.put(":empty", AttributeValue.fromL(List.of()));
            update += ", replays = list_append(if_not_exists(replays, :empty), :r)";
        }
        String u = update;
        try {
            updateEither(key, (storageKey, condition) -> {
                Map<String, AttributeValue> v = new HashMap<>(values);
                condition.values().forEach(v::put);
                Unavailability.write(STORE, () -> dynamo.updateItem(UpdateItemRequest.builder().tableName(table)
                        .key(Map.of(KEY, Attrs.s(storageKey)))
                        .updateExpression(u)
                        .conditionExpression(condition.expression())
                        .expressionAttributeNames(Map.of("#status", "status"))
                        .expressionAttributeValues(v).build()));
            });
            return true;
        } catch (ConditionalCheckFailedException gone) {
            // The only condition is that the record exists, under either key.
            return false;
        }
    }

    /** A write's condition: the record exists (and, under a bare job id, is one from before scoping and this tenant's). */
    private record Exists(String expression, Map<String, AttributeValue> values) {
    }

    /**
     * Applies {@code write} to the record under its scoped key, or under the bare job id for a record written before scoping;
     * never to a scoped record whose key that job id happens to be.
     */
    private void updateEither(JobKey key, java.util.function.BiConsumer<String, Exists> write) {
        try {
            write.accept(key.storage(), new Exists("attribute_exists(jobId)", Map.of()));
        } catch (ConditionalCheckFailedException notScoped) {
            if (key.tenant() == null) {
                throw notScoped;
            }
            write.accept(key.jobId(), new Exists("attribute_exists(jobId) AND attribute_not_exists(" + JOB + ") AND tenant = :owner",
                    Map.of(":owner", Attrs.s(key.tenant()))));
        }
    }

    @Override
    public void recordReplayOutcome(JobKey key, int generation, QuarantineStatus status, String outcome) {
        Optional<QuarantineRecord> current = find(key);
        if (current.isEmpty()) {
            return;
        }
        List<ReplayEntry> replays = current.get().replays().stream()
                .map(e -> e.generation() == generation ? new ReplayEntry(e.generation(), e.at(), e.actor(), e.reason(), outcome) : e)
                .toList();
        try {
            updateEither(key, (storageKey, condition) -> {
                Map<String, AttributeValue> v = new HashMap<>(Map.of(":st", Attrs.s(status.name()), ":r", replays(replays)));
                condition.values().forEach(v::put);
                Unavailability.write(STORE, () -> dynamo.updateItem(UpdateItemRequest.builder().tableName(table)
                        .key(Map.of(KEY, Attrs.s(storageKey)))
                        .updateExpression("SET #status = :st, replays = :r")
                        .conditionExpression(condition.expression())
                        .expressionAttributeNames(Map.of("#status", "status"))
                        .expressionAttributeValues(v).build()));
            });
        } catch (ConditionalCheckFailedException gone) {
            // Gone since it was read (its TTL passed): as when it was not found.
        }
    }

    @Override
    public boolean acknowledge(JobKey key, String by, Instant at) {
        return conditional(key, "SET ackBy = :by, ackAt = :at", "#status = :waiting AND attribute_not_exists(ackBy)",
                Map.of(":by", Attrs.s(by), ":at", Attrs.millis(at), ":waiting", Attrs.s(QuarantineStatus.QUARANTINED.name())), true);
    }

    @Override
    public void assign(JobKey key, String assignee) {
        if (assignee == null) {
            conditional(key, "REMOVE assignee", null, Map.of(), false);
        } else {
            conditional(key, "SET assignee = :a", null, Map.of(":a", Attrs.s(assignee)), false);
        }
    }

    @Override
    public boolean addNote(JobKey key, io.poisonguard.quarantine.Triage.Note note) {
        Map<String, AttributeValue> n = new HashMap<>();
        n.put("at", Attrs.millis(note.at()));
        n.put("by", Attrs.s(note.by()));
        n.put("text", Attrs.s(note.text()));
        return conditional(key, "SET notes = list_append(if_not_exists(notes, :empty), :n)",
                "attribute_not_exists(notes) OR size(notes) < :max", Map.of(":n", AttributeValue.fromL(List.of(AttributeValue.fromM(n))),
                        ":empty", AttributeValue.fromL(List.of()), ":max", Attrs.n(io.poisonguard.quarantine.Triage.MAX_NOTES)), false);
    }

    @Override
    public boolean markEscalated(JobKey key, String stage) {
        return conditional(key, "ADD escalated :s", "attribute_not_exists(escalated) OR NOT contains(escalated, :stage)",
                Map.of(":s", AttributeValue.fromSs(List.of(stage)), ":stage", Attrs.s(stage)), false);
    }

    /**
     * One update of an existing record under its scoped key (or its bare job id, for a record from before scoping),
     * with an extra condition; false when that condition does not hold.
     */
    private boolean conditional(JobKey key, String update, String extra, Map<String, AttributeValue> values, boolean usesStatus) {
        try {
            updateEither(key, (storageKey, exists) -> {
                Map<String, AttributeValue> v = new HashMap<>(values);
                exists.values().forEach(v::put);
                UpdateItemRequest.Builder b = UpdateItemRequest.builder().tableName(table).key(Map.of(KEY, Attrs.s(storageKey)))
                        .updateExpression(update)
                        .conditionExpression(extra == null ? exists.expression() : exists.expression() + " AND (" + extra + ")");
                if (usesStatus) {
                    b.expressionAttributeNames(Map.of("#status", "status"));
                }
                if (!v.isEmpty()) {
                    b.expressionAttributeValues(v);
                }
                Unavailability.write(STORE, () -> dynamo.updateItem(b.build()));
            });
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    @Override
    public List<QuarantineRecord> waitingSince(FailureClass failureClass, List<Due> acknowledge, List<Due> resolve, Instant now, int limit) {
        // One read per stage and group of owners sharing its deadline: the time a stage falls due is on the index's sort
        // key, which a filter cannot use, and a slow owner's records not yet due must not fill a read before a faster one's.
        List<QuarantineRecord> found = new ArrayList<>();
        for (Due due : resolve) {
            found.addAll(waitingOf(failureClass, due, " AND (attribute_not_exists(escalated) OR NOT contains(escalated, :last))",
                    Map.of(":last", Attrs.s(LAST_STAGE)), now, limit));
        }
        for (Due due : acknowledge) {
            found.addAll(waitingOf(failureClass, due, " AND attribute_not_exists(ackBy) AND (attribute_not_exists(escalated) OR"
                    + " (NOT contains(escalated, :first) AND NOT contains(escalated, :last)))",
                    Map.of(":first", Attrs.s(FIRST_STAGE), ":last", Attrs.s(LAST_STAGE)), now, limit));
        }
        Map<String, QuarantineRecord> each = new java.util.LinkedHashMap<>();
        found.stream().sorted(java.util.Comparator.comparing(QuarantineRecord::quarantinedAt))
                .forEach(r -> each.putIfAbsent(JobKey.of(r.tenant(), r.jobId()).storage(), r));
        return List.copyOf(each.values());
    }

    /** Most operands of one {@code IN} (DynamoDB allows 100); more owners take several, joined. */
    static final int OWNERS_PER_IN = 99;

    /** The waiting records of one group of owners quarantined at or before its time, narrowed by {@code stageFilter}. */
    private List<QuarantineRecord> waitingOf(FailureClass failureClass, Due due, String stageFilter, Map<String, AttributeValue> stageValues,
                                             Instant now, int limit) {
        Map<String, AttributeValue> values = new HashMap<>(stageValues);
        values.put(":before", Attrs.millis(due.before()));
        Map<String, String> names = new HashMap<>();
        String ownerFilter = "";
        if (!due.owners().isEmpty()) {
            List<String> ins = new ArrayList<>();
            List<String> placeholders = new ArrayList<>();
            int i = 0;
            for (String owner : new java.util.TreeSet<>(due.owners())) {
                values.put(":o" + i, Attrs.s(owner));
                placeholders.add(":o" + i++);
                if (placeholders.size() == OWNERS_PER_IN) {
                    ins.add("#owner IN (" + String.join(", ", placeholders) + ")");
                    placeholders.clear();
                }
            }
            if (!placeholders.isEmpty()) {
                ins.add("#owner IN (" + String.join(", ", placeholders) + ")");
            }
            String named = "(" + String.join(" OR ", ins) + ")";
            ownerFilter = due.allBut() ? " AND (attribute_not_exists(#owner) OR NOT " + named + ")" : " AND " + named;
            names.put("#owner", "owner");
        }
        return waitingInClass(failureClass, now, " AND quarantinedAt <= :before", stageFilter + ownerFilter, values, names, null, limit,
                DynamoQuarantineStore::decode);
    }

    @Override
    public List<Escalated> partlyEscalated(FailureClass failureClass, Instant now, int max) {
        return waitingInClass(failureClass, now, "", " AND contains(escalated, :first) AND NOT contains(escalated, :last)",
                Map.of(":first", Attrs.s(FIRST_STAGE), ":last", Attrs.s(LAST_STAGE)), Map.of("#owner", "owner"), "#owner, ackBy", max,
                item -> new Escalated(Attrs.str(item, "owner"), item.containsKey("ackBy")));
    }

    @Override
    public List<Escalated> fullyEscalated(FailureClass failureClass, Instant now, int max) {
        return waitingInClass(failureClass, now, "", " AND contains(escalated, :last)", Map.of(":last", Attrs.s(LAST_STAGE)),
                Map.of("#owner", "owner"), "#owner, ackBy", max, item -> new Escalated(Attrs.str(item, "owner"), item.containsKey("ackBy")));
    }

    @Override
    public Waiting waiting(FailureClass failureClass, Instant now, int max) {
        // Only the time of each match, oldest first: the first is the oldest waiting job.
        List<Instant> times = waitingInClass(failureClass, now, "", "", Map.of(), Map.of(), "quarantinedAt", max,
                item -> Attrs.instantMillis(item, "quarantinedAt"));
        return new Waiting(times.size(), times.stream().findFirst());
    }

    /**
     * The live records of one class still waiting (status QUARANTINED), oldest first through the class index, narrowed by
     * {@code moreKey} (on quarantinedAt) and {@code moreFilter}, each mapped by {@code map}, at most {@code max}.
     */
    private <T> List<T> waitingInClass(FailureClass failureClass, Instant now, String moreKey, String moreFilter,
                                       Map<String, AttributeValue> moreValues, Map<String, String> moreNames, String projection, int max,
                                       java.util.function.Function<Map<String, AttributeValue>, T> map) {
        Map<String, AttributeValue> values = new HashMap<>(moreValues);
        values.put(":c", Attrs.s(failureClass.name()));
        values.put(":waiting", Attrs.s(QuarantineStatus.QUARANTINED.name()));
        values.put(":now", Attrs.epochSeconds(now));
        Map<String, String> names = new HashMap<>(moreNames);
        names.put("#status", "status");
        List<T> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryRequest.Builder query = QueryRequest.builder().tableName(table).indexName(BY_CLASS)
                    .keyConditionExpression("failureClass = :c" + moreKey)
                    .filterExpression("#status = :waiting AND (attribute_not_exists(expiresAt) OR expiresAt > :now)" + moreFilter)
                    .expressionAttributeNames(names).expressionAttributeValues(values)
                    .scanIndexForward(true).exclusiveStartKey(start);
            if (projection != null) {
                query.projectionExpression(projection);
            }
            QueryResponse page = Unavailability.read(STORE, () -> dynamo.query(query.build()));
            for (Map<String, AttributeValue> item : page.items()) {
                if (out.size() < max) {
                    out.add(map.apply(item));
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null && out.size() < max);
        return out;
    }

    /** The job key of a stored item: a key without a tenant part is the key of a copy that named no valid tenant. */
    private static JobKey keyOf(Map<String, AttributeValue> item) {
        String storage = Attrs.str(item, KEY);
        String tenant = Attrs.str(item, "tenant");
        if (!item.containsKey(JOB) && NO_TENANT.equals(tenant)) {
            // Before scoped keys, a job of no valid tenant was kept under its bare id with the placeholder; as that cannot
            // be told from a tenant named "unknown", such a record is no tenant's (only a token of every tenant sees it).
            return new JobKey(null, storage);
        }
        return JobKey.fromStorage(storage, tenant);
    }

    static Map<String, AttributeValue> encode(QuarantineRecord r) {
        Map<String, AttributeValue> m = new HashMap<>();
        m.put(KEY, Attrs.s(JobKey.of(r.tenant(), r.jobId()).storage()));
        m.put(JOB, Attrs.s(r.jobId()));
        m.put("tenant", Attrs.s(r.tenant() == null ? NO_TENANT : r.tenant()));
        m.put("jobType", Attrs.s(r.jobType() == null ? "unknown" : r.jobType()));
        m.put("generation", Attrs.n(r.generation()));
        m.put("failureClass", Attrs.s(r.failureClass().name()));
        m.put("reason", Attrs.s(r.reason()));
        m.put("attempts", Attrs.n(r.attempts()));
        Map<String, AttributeValue> failures = new HashMap<>();
        r.failures().forEach((c, n) -> failures.put(c.name(), Attrs.n(n)));
        m.put("failures", AttributeValue.fromM(failures));
        Diagnostics d = r.diagnostics();
        m.put("sizeBytes", Attrs.n(d.sizeBytes()));
        m.put("charset", Attrs.s(d.charset()));
        if (d.transferEncoding() != null) {
            m.put("transferEncoding", Attrs.s(d.transferEncoding()));
        }
        if (d.tokenEstimate() != null) {
            m.put("tokenEstimate", Attrs.n(d.tokenEstimate()));
        }
        if (d.schemaVersion() != null) {
            m.put("schemaVersion", Attrs.n(d.schemaVersion()));
        }
        if (d.attachmentCount() != null) {
            m.put("attachmentCount", Attrs.n(d.attachmentCount()));
        }
        m.put("history", HistoryCodec.encode(r.history()));
        m.put("firstSeen", Attrs.millis(r.firstSeen()));
        m.put("lastSeen", Attrs.millis(r.lastSeen()));
        m.put("quarantinedAt", Attrs.millis(r.quarantinedAt()));
        m.put(TTL, Attrs.epochSeconds(r.expiresAt()));
        m.put("sourceMessageId", Attrs.s(r.sourceMessageId()));
        m.put("status", Attrs.s(r.status().name()));
        m.put("replays", replays(r.replays()));
        if (r.receiveCount() != null) {
            m.put("receiveCount", Attrs.n(r.receiveCount()));
        }
        m.put("deadLetter", Attrs.s(r.deadLetter().state().name()));
        if (r.deadLetter().detail() != null) {
            m.put("deadLetterDetail", Attrs.s(r.deadLetter().detail()));
        }
        m.put("sourceKept", AttributeValue.fromBool(r.deadLetter().sourceKept()));
        io.poisonguard.quarantine.Triage t = r.triage();
        if (t.owner() != null) {
            m.put("owner", Attrs.s(t.owner()));
        }
        m.put("ownerDefaulted", AttributeValue.fromBool(t.ownerDefaulted()));
        if (t.acknowledgedBy() != null) {
            m.put("ackBy", Attrs.s(t.acknowledgedBy()));
            m.put("ackAt", Attrs.millis(t.acknowledgedAt()));
        }
        if (t.assignee() != null) {
            m.put("assignee", Attrs.s(t.assignee()));
        }
        if (!t.notes().isEmpty()) {
            m.put("notes", AttributeValue.fromL(t.notes().stream().map(n -> AttributeValue.fromM(Map.of("at", Attrs.millis(n.at()),
                    "by", Attrs.s(n.by()), "text", Attrs.s(n.text())))).toList()));
        }
        if (!t.escalated().isEmpty()) {
            m.put("escalated", AttributeValue.fromSs(List.copyOf(t.escalated())));
        }
        return m;
    }

    private static Map<FailureClass, Integer> failures(AttributeValue v) {
        Map<FailureClass, Integer> out = new java.util.EnumMap<>(FailureClass.class);
        if (v != null && v.hasM()) {
            v.m().forEach((k, n) -> out.put(FailureClass.valueOf(k), Integer.valueOf(n.n())));
        }
        return out;
    }

    private static AttributeValue replays(List<ReplayEntry> replays) {
        return AttributeValue.fromL(replays.stream().map(e -> {
            Map<String, AttributeValue> m = new HashMap<>();
            m.put("generation", Attrs.n(e.generation()));
            m.put("at", Attrs.millis(e.at()));
            m.put("actor", Attrs.s(e.actor()));
            m.put("reason", Attrs.s(e.reason()));
            if (e.outcome() != null) {
                m.put("outcome", Attrs.s(e.outcome()));
            }
            return AttributeValue.fromM(m);
        }).toList());
    }

    private static List<ReplayEntry> replays(AttributeValue v) {
        if (v == null || !v.hasL()) {
            return List.of();
        }
        return v.l().stream().map(a -> new ReplayEntry(Attrs.integer(a.m(), "generation"), Attrs.instantMillis(a.m(), "at"),
                Attrs.str(a.m(), "actor"), Attrs.str(a.m(), "reason"), Attrs.str(a.m(), "outcome"))).toList();
    }

    static QuarantineRecord decode(Map<String, AttributeValue> m) {
        Diagnostics d = new Diagnostics(Attrs.lng(m, "sizeBytes", 0), Attrs.str(m, "charset"), Attrs.str(m, "transferEncoding"),
                Attrs.integer(m, "tokenEstimate"), Attrs.integer(m, "schemaVersion"), Attrs.integer(m, "attachmentCount"));
        JobKey key = keyOf(m);
        return new QuarantineRecord(
                key.jobId(),
                key.tenant(),
                Attrs.str(m, "jobType"),
                Attrs.integer(m, "generation"),
                FailureClass.valueOf(Attrs.str(m, "failureClass")),
                Attrs.str(m, "reason"),
                Attrs.integer(m, "attempts"),
                failures(m.get("failures")),
                d,
                HistoryCodec.decode(m.get("history")),
                Attrs.instantMillis(m, "firstSeen"),
                Attrs.instantMillis(m, "lastSeen"),
                Attrs.instantMillis(m, "quarantinedAt"),
                Attrs.instantSeconds(m, TTL),
                Attrs.str(m, "sourceMessageId"),
                Attrs.str(m, "status") == null ? QuarantineStatus.QUARANTINED : QuarantineStatus.valueOf(Attrs.str(m, "status")),
                replays(m.get("replays")),
                Attrs.integer(m, "receiveCount"),
                deadLetter(m),
                triage(m));
    }

    private static io.poisonguard.quarantine.Triage triage(Map<String, AttributeValue> m) {
        AttributeValue defaulted = m.get("ownerDefaulted");
        List<io.poisonguard.quarantine.Triage.Note> notes = m.containsKey("notes") && m.get("notes").hasL()
                ? m.get("notes").l().stream().map(n -> new io.poisonguard.quarantine.Triage.Note(Attrs.instantMillis(n.m(), "at"),
                        Attrs.str(n.m(), "by"), Attrs.str(n.m(), "text"))).toList()
                : List.of();
        return new io.poisonguard.quarantine.Triage(Attrs.str(m, "owner"), defaulted == null || Boolean.TRUE.equals(defaulted.bool()),
                Attrs.str(m, "ackBy"), Attrs.instantMillis(m, "ackAt"), Attrs.str(m, "assignee"), notes,
                m.containsKey("escalated") && m.get("escalated").hasSs() ? java.util.Set.copyOf(m.get("escalated").ss()) : java.util.Set.of());
    }

    private static DeadLetterCopy deadLetter(Map<String, AttributeValue> m) {
        String state = Attrs.str(m, "deadLetter");
        if (state == null) {
            return null;
        }
        AttributeValue kept = m.get("sourceKept");
        return new DeadLetterCopy(DeadLetterCopy.State.valueOf(state), Attrs.str(m, "deadLetterDetail"),
                kept != null && Boolean.TRUE.equals(kept.bool()));
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.audit.AuditPage;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The audit trail in DynamoDB: partition jobId, sort key {@code t:<tenant>#<instant>#<nonce>} (the instant in a fixed
 * width, so keys sort by time within a tenant; {@code -} for no tenant), so one tenant's entries of a job id are read
 * by a key condition, whatever other tenants wrote under the same id. Entries written before 2026-12-06 have the sort
 * key {@code <instant>#<nonce>} and are read beside them, filtered by tenant. Each entry is put with
 * attribute_not_exists, so nothing overwrites an earlier entry. Two indexes serve the listings: {@value #BY_TENANT}
 * (tenant, atMillis) for one tenant's entries and {@value #BY_DAY} (UTC day, atMillis) for all of them; entries on
 * no tenant carry the tenant {@value #NO_TENANT}.
 */
public final class DynamoAuditLog implements AuditLog {
    public static final String BY_TENANT = "by-tenant";
    public static final String BY_DAY = "by-day";
    public static final String NO_TENANT = "-";
    /** Days one listing call walks back before answering with a cursor. */
    static final int DAYS_PER_CALL = 31;
    private static final String DAY_MARK = "~day";
    /** What a {@link io.poisonguard.ledger.StoreUnavailable} names when this table does not answer. */
    private static final String STORE = "the audit trail";

    private final DynamoDbClient dynamo;
    private final String table;
    private final Clock clock;

    public DynamoAuditLog(DynamoDbClient dynamo, String table, Clock clock) {
        this.dynamo = dynamo;
        this.table = table;
        this.clock = clock;
    }

    @Override
    public void append(AuditEntry e) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("jobId", Attrs.s(e.jobId()));
        item.put("at", Attrs.s(scope(e.tenant()) + SORTABLE.format(e.at()) + "#" + UUID.randomUUID().toString().substring(0, 8)));
        item.put("atMillis", Attrs.millis(e.at()));
        item.put("day", Attrs.s(LocalDate.ofInstant(e.at(), ZoneOffset.UTC).toString()));
        item.put("tenant", Attrs.s(e.tenant() == null ? NO_TENANT : e.tenant()));
        item.put("actor", Attrs.s(e.actor()));
        item.put("action", Attrs.s(e.action().name()));
        item.put("reason", Attrs.s(e.reason() == null ? "" : e.reason()));
        item.put("codeVersion", Attrs.s(e.codeVersion()));
        if (e.generation() != null) {
            item.put("generation", Attrs.n(e.generation()));
        }
        if (e.attempt() != null) {
            item.put("attempt", Attrs.n(e.attempt()));
        }
        item.put("outcome", Attrs.s(e.outcome()));
        if (e.detail() != null && !e.detail().isEmpty()) {
            item.put("detail", Attrs.s(e.detail()));
        }
        Unavailability.write(STORE, () -> dynamo.putItem(b -> b.tableName(table).item(item).conditionExpression("attribute_not_exists(jobId)")));
    }

    @Override
    public List<AuditEntry> forJob(String jobId, java.util.function.Predicate<AuditEntry> keep, int limit) {
        // Every tenant's entries under the id: keys sort by tenant first, so read them all (at most JOB_READ_PAGES pages,
        // so a crowded id cannot make one view read without end) and keep the newest.
        return newest(read(jobId, "jobId = :j", Map.of(), null, keep, Integer.MAX_VALUE, Math.max(limit, 100)), limit);
    }

    @Override
    public List<AuditEntry> forTenantsJob(String tenant, String jobId, int limit) {
        String scope = scope(tenant);
        List<AuditEntry> entries = new ArrayList<>(read(jobId, "jobId = :j AND begins_with(#a, :p)", Map.of(":p", Attrs.s(scope)),
                null, e -> true, limit, Math.max(limit, 100)));
        if (entries.size() < limit) {
            // Entries from before tenant-scoped keys (a sort key that starts with the instant, below every "t:" key).
            entries.addAll(read(jobId, "jobId = :j AND #a < :p", Map.of(":p", Attrs.s(SCOPED)),
                    tenant == null ? NO_TENANT : tenant, e -> true, limit - entries.size(), Math.max(limit, 100)));
        }
        return newest(entries, limit);
    }

    /**
     * Reads one job id's entries newest key first, at most {@code want} that {@code keep} accepts and
     * {@link #JOB_READ_PAGES} pages of {@code pageSize}; {@code tenant}, when given, filtered on the table's side.
     */
    private List<AuditEntry> read(String jobId, String condition, Map<String, AttributeValue> values, String tenant,
                                  java.util.function.Predicate<AuditEntry> keep, int want, int pageSize) {
        Map<String, AttributeValue> all = new HashMap<>(values);
        all.put(":j", Attrs.s(jobId));
        Map<String, String> names = new HashMap<>();
        if (condition.contains("#a")) {
            names.put("#a", "at");
        }
        if (tenant != null) {
            all.put(":t", Attrs.s(tenant));
            names.put("#t", "tenant");
        }
        List<AuditEntry> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        for (int page = 0; page < JOB_READ_PAGES && out.size() < want; page++) {
            Map<String, AttributeValue> from = start;
            QueryRequest.Builder query = QueryRequest.builder().tableName(table).keyConditionExpression(condition)
                    .expressionAttributeValues(all).scanIndexForward(false).limit(pageSize).exclusiveStartKey(from);
            if (!names.isEmpty()) {
                query.expressionAttributeNames(names);
            }
            if (tenant != null) {
                query.filterExpression("#t = :t");
            }
            QueryResponse r = Unavailability.read(STORE, () -> dynamo.query(query.build()));
            for (Map<String, AttributeValue> item : r.items()) {
                AuditEntry e = decode(item);
                if (keep.test(e) && out.size() < want) {
                    out.add(e);
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
            if (start == null) {
                break;
            }
        }
        return out;
    }

    /** The newest {@code limit} of {@code entries}, oldest first. */
    private static List<AuditEntry> newest(List<AuditEntry> entries, int limit) {
        List<AuditEntry> sorted = new ArrayList<>(entries);
        sorted.sort(java.util.Comparator.comparing(AuditEntry::at).reversed());
        List<AuditEntry> kept = new ArrayList<>(sorted.subList(0, Math.min(limit, sorted.size())));
        java.util.Collections.reverse(kept);
        return kept;
    }

    /** Where every tenant-scoped sort key starts; an older key (an instant) sorts below it. */
    private static final String SCOPED = "t:";
    /** An instant in one width, so that keys of one tenant sort by time. */
    private static final java.time.format.DateTimeFormatter SORTABLE =
            java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    /** The start of the sort keys of {@code tenant}'s entries (null: no tenant's). */
    static String scope(String tenant) {
        return SCOPED + (tenant == null ? NO_TENANT : tenant) + "#";
    }

    /** How many pages of one job id's entries a view reads at most looking for the ones it keeps. */
    private static final int JOB_READ_PAGES = 10;

    @Override
    public AuditPage recent(Optional<String> tenant, int limit, Optional<String> cursor) {
        Map<String, AttributeValue> start = cursor.map(Cursors::decode).orElse(null);
        try {
            return tenant.isPresent() ? ofTenant(tenant.get(), limit, start) : acrossDays(limit, start);
        } catch (DynamoDbException e) {
            // A cursor that decodes but is no key of this index (tampered, or from another listing); a throttle, also a 400,
            // is StoreUnavailable by now.
            if (start != null && e.statusCode() == 400) {
                throw new IllegalArgumentException("cursor is not valid for this listing");
            }
            throw e;
        }
    }

    private AuditPage ofTenant(String tenant, int limit, Map<String, AttributeValue> start) {
        QueryResponse page = Unavailability.read(STORE, () -> dynamo.query(QueryRequest.builder().tableName(table).indexName(BY_TENANT)
                .keyConditionExpression("tenant = :t").expressionAttributeValues(Map.of(":t", Attrs.s(tenant))).scanIndexForward(false)
                .limit(limit).exclusiveStartKey(start).build()));
        return new AuditPage(page.items().stream().map(DynamoAuditLog::decode).toList(), next(page));
    }

    private AuditPage acrossDays(int limit, Map<String, AttributeValue> start) {
        LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        LocalDate oldest = today.minusDays(LISTING_DAYS);
        LocalDate day = today;
        Map<String, AttributeValue> from = null;
        if (start != null) {
            Map<String, AttributeValue> key = new HashMap<>(start);
            AttributeValue mark = key.remove(DAY_MARK);
            if (mark == null || mark.s() == null) {
                throw new IllegalArgumentException("cursor is not valid for this listing");
            }
            try {
                day = LocalDate.parse(mark.s());
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("cursor is not valid for this listing");
            }
            if (day.isAfter(today) || day.isBefore(oldest)) {
                throw new IllegalArgumentException("cursor is not valid for this listing");
            }
            from = key.isEmpty() ? null : key;
        }
        List<AuditEntry> out = new ArrayList<>();
        for (int walked = 0; walked < DAYS_PER_CALL; walked++) {
            String dayText = day.toString();
            QueryRequest query = QueryRequest.builder().tableName(table).indexName(BY_DAY).keyConditionExpression("#d = :d")
                    .expressionAttributeNames(Map.of("#d", "day")).expressionAttributeValues(Map.of(":d", Attrs.s(dayText)))
                    .scanIndexForward(false).limit(limit - out.size()).exclusiveStartKey(from).build();
            QueryResponse page = Unavailability.read(STORE, () -> dynamo.query(query));
            page.items().forEach(i -> out.add(decode(i)));
            String more = next(page);
            if (more != null) {
                Map<String, AttributeValue> key = new HashMap<>(page.lastEvaluatedKey());
                key.put(DAY_MARK, Attrs.s(dayText));
                return new AuditPage(out, Cursors.encode(key));
            }
            from = null;
            day = day.minusDays(1);
            if (day.isBefore(oldest)) {
                return new AuditPage(out, null);
            }
            if (out.size() >= limit) {
                break;
            }
        }
        return new AuditPage(out, Cursors.encode(Map.of(DAY_MARK, Attrs.s(day.toString()))));
    }

    private static String next(QueryResponse page) {
        return page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? Cursors.encode(page.lastEvaluatedKey()) : null;
    }

    private static AuditEntry decode(Map<String, AttributeValue> i) {
        String tenant = Attrs.str(i, "tenant");
        return new AuditEntry(Attrs.str(i, "jobId"), NO_TENANT.equals(tenant) ? null : tenant, Attrs.instantMillis(i, "atMillis"),
                Attrs.str(i, "actor"), AuditAction.valueOf(Attrs.str(i, "action")), Attrs.str(i, "reason"), Attrs.str(i, "codeVersion"),
                Attrs.integer(i, "generation"), Attrs.integer(i, "attempt"), Attrs.str(i, "outcome"), Attrs.str(i, "detail"));
    }
}

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
 * by a key condition, whatever other tenants wrote under the same id. Entries written by releases before this format
 * have the sort key {@code <instant>#<nonce>} (below every {@code t:} key) and are read beside them, filtered by tenant. Each entry is put with
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
    private final Cursors cursors;
    private final Clock clock;

    public DynamoAuditLog(DynamoDbClient dynamo, String table, Clock clock) {
        this(dynamo, table, clock, Cursors.PROCESS);
    }

    DynamoAuditLog(DynamoDbClient dynamo, String table, Clock clock, Cursors cursors) {
        this.dynamo = dynamo;
        this.table = table;
        this.clock = clock;
        this.cursors = cursors;
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
        // Keys sort by tenant, then time: walk the tenants' key ranges from the highest down, each read newest first
        // (two small queries per tenant using the id), then the keys from before they were scoped.
        int pageSize = Math.max(limit, 100);
        List<AuditEntry> entries = new ArrayList<>();
        String below = null;
        for (int tenants = 0; tenants < TENANTS_PER_ID; tenants++) {
            Optional<String> scope = highestScope(jobId, below);
            if (scope.isEmpty()) {
                break;
            }
            entries.addAll(read(jobId, "jobId = :j AND begins_with(#a, :p)", Map.of(":p", Attrs.s(scope.get())), keep, limit, pageSize));
            below = scope.get();
        }
        entries.addAll(read(jobId, "jobId = :j AND #a < :p", Map.of(":p", Attrs.s(SCOPED)), keep, limit, pageSize));
        return newest(entries, limit);
    }

    /** The scope (key prefix) of the highest tenant-scoped key of the id below {@code below} (null: of all). */
    private Optional<String> highestScope(String jobId, String below) {
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":j", Attrs.s(jobId), ":p", Attrs.s(SCOPED)));
        if (below != null) {
            // No key equals a scope itself (a key goes on past it), so the inclusive bound leaves that tenant out.
            values.put(":b", Attrs.s(below));
        }
        QueryResponse r = Unavailability.read(STORE, () -> dynamo.query(QueryRequest.builder().tableName(table)
                .keyConditionExpression(below == null ? "jobId = :j AND #a >= :p" : "jobId = :j AND #a BETWEEN :p AND :b")
                .expressionAttributeNames(Map.of("#a", "at")).expressionAttributeValues(values).projectionExpression("#a")
                .scanIndexForward(false).limit(1).build()));
        if (r.items().isEmpty()) {
            return Optional.empty();
        }
        String key = Attrs.str(r.items().get(0), "at");
        int end = key.indexOf('#', SCOPED.length());
        return end < 0 ? Optional.empty() : Optional.of(key.substring(0, end + 1));
    }

    @Override
    public List<AuditEntry> forTenantsJob(java.util.Collection<String> tenants, String jobId, int limit) {
        int pageSize = Math.max(limit, 100);
        List<AuditEntry> entries = new ArrayList<>();
        java.util.Set<String> named = new java.util.HashSet<>();
        for (String tenant : tenants) {
            named.add(tenant == null ? NO_TENANT : tenant);
            entries.addAll(read(jobId, "jobId = :j AND begins_with(#a, :p)", Map.of(":p", Attrs.s(scope(tenant))), e -> true, limit, pageSize));
        }
        // Keys from before tenant-scoped ones (starting with the instant, below every "t:" key): read once, these tenants'
        // kept. Read even when the scoped ones fill the limit: an older release still running writes such keys.
        entries.addAll(read(jobId, "jobId = :j AND #a < :p", Map.of(":p", Attrs.s(SCOPED)),
                e -> named.contains(e.tenant() == null ? NO_TENANT : e.tenant()), limit, pageSize));
        return newest(entries, limit);
    }

    /**
     * Reads one job id's entries newest key first, at most {@code want} that {@code keep} accepts and
     * {@link #JOB_READ_PAGES} pages of {@code pageSize}.
     */
    private List<AuditEntry> read(String jobId, String condition, Map<String, AttributeValue> values,
                                  java.util.function.Predicate<AuditEntry> keep, int want, int pageSize) {
        Map<String, AttributeValue> all = new HashMap<>(values);
        all.put(":j", Attrs.s(jobId));
        List<AuditEntry> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        for (int page = 0; page < JOB_READ_PAGES && out.size() < want; page++) {
            Map<String, AttributeValue> from = start;
            QueryRequest query = QueryRequest.builder().tableName(table).keyConditionExpression(condition)
                    .expressionAttributeNames(Map.of("#a", "at")).expressionAttributeValues(all).scanIndexForward(false).limit(pageSize)
                    .exclusiveStartKey(from).build();
            QueryResponse r = Unavailability.read(STORE, () -> dynamo.query(query));
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

    /** How many pages of one key range of a job id a view reads at most looking for the ones it keeps. */
    private static final int JOB_READ_PAGES = 10;
    /** How many tenants' entries under one job id a view across tenants reads at most. */
    static final int TENANTS_PER_ID = 50;

    @Override
    public AuditPage recent(Optional<String> tenant, int limit, Optional<String> cursor) {
        Map<String, AttributeValue> start = cursor.map(cursors::decode).orElse(null);
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
                return new AuditPage(out, cursors.encode(key));
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
        return new AuditPage(out, cursors.encode(Map.of(DAY_MARK, Attrs.s(day.toString()))));
    }

    private String next(QueryResponse page) {
        return page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? cursors.encode(page.lastEvaluatedKey()) : null;
    }

    private static AuditEntry decode(Map<String, AttributeValue> i) {
        String tenant = Attrs.str(i, "tenant");
        return new AuditEntry(Attrs.str(i, "jobId"), NO_TENANT.equals(tenant) ? null : tenant, Attrs.instantMillis(i, "atMillis"),
                Attrs.str(i, "actor"), AuditAction.valueOf(Attrs.str(i, "action")), Attrs.str(i, "reason"), Attrs.str(i, "codeVersion"),
                Attrs.integer(i, "generation"), Attrs.integer(i, "attempt"), Attrs.str(i, "outcome"), Attrs.str(i, "detail"));
    }
}

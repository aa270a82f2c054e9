package io.poisonguard.dynamodb;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.replay.BulkReplay;
import io.poisonguard.replay.BulkReplayStore;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Bulk replays' progress in DynamoDB: one item per batch (key {@code id}), rewritten at each step and kept
 * for {@link #KEPT} after the batch started (TTL {@code expiresAt}). The audit trail keeps the outcome for good.
 */
public final class DynamoBulkReplayStore implements BulkReplayStore {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(DynamoBulkReplayStore.class);
    /** How long a batch's state stays readable. */
    public static final Duration KEPT = Duration.ofDays(30);
    /** What a {@link io.poisonguard.ledger.StoreUnavailable} names when this table does not answer. */
    private static final String STORE = "the bulk replay table";

    private final DynamoDbClient dynamo;
    private final String table;
    private final Clock clock;

    /**
     * What a batch's steps may take of its item (DynamoDB's limit is 400 KB for the whole item; the rest of it is the
     * request's reason and detail, which the API bounds).
     */
    static final int STEPS_BUDGET_BYTES = 300_000;

    public DynamoBulkReplayStore(DynamoDbClient dynamo, String table, Clock clock) {
        this.dynamo = dynamo;
        this.table = table;
        this.clock = clock;
    }

    @Override
    public void put(BulkReplay whole) {
        BulkReplay b = whole.fittedTo(STEPS_BUDGET_BYTES);
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("id", Attrs.s(b.id()));
        item.put("actor", Attrs.s(b.actor()));
        item.put("reason", Attrs.s(b.reason() == null ? "" : b.reason()));
        item.put("tenant", Attrs.s(b.tenant()));
        item.put("failureClass", Attrs.s(b.failureClass().name()));
        item.put("selected", Attrs.n(b.selected()));
        item.put("status", Attrs.s(b.status().name()));
        optional(item, "canaryJobId", b.canaryJobId());
        optional(item, "canaryOutcome", b.canaryOutcome());
        optional(item, "detail", b.detail());
        item.put("steps", AttributeValue.fromL(b.outcomes().stream().map(DynamoBulkReplayStore::step).toList()));
        if (b.stepsOmitted() > 0) {
            item.put("stepsOmitted", Attrs.n(b.stepsOmitted()));
        }
        if (b.notReplayedOmitted() > 0) {
            item.put("notReplayedOmitted", Attrs.n(b.notReplayedOmitted()));
        }
        item.put("startedAt", Attrs.millis(b.startedAt()));
        item.put("updatedAt", Attrs.millis(b.updatedAt()));
        if (b.finishedAt() != null) {
            item.put("finishedAt", Attrs.millis(b.finishedAt()));
        }
        item.put("expiresAt", Attrs.epochSeconds(b.startedAt().plus(KEPT)));
        if (b.finishedAt() != null) {
            Unavailability.write(STORE, () -> dynamo.putItem(r -> r.tableName(table).item(item)));
            return;
        }
        try {
            // A running state never lands over an end: an earlier write that the SDK gave up on may still be applied by DynamoDB
            // after the final state was kept, and the condition is checked when it is applied.
            Unavailability.write(STORE, () -> dynamo.putItem(r -> r.tableName(table).item(item).conditionExpression("attribute_not_exists(finishedAt)")));
        } catch (ConditionalCheckFailedException ended) {
            LOG.debugf("Bulk replay %s: a running state was not kept over its end", b.id());
        }
    }

    @Override
    public Optional<BulkReplay> find(String id) {
        if (id.startsWith(DynamoReplayQuota.PREFIX) || id.equals(DynamoGuardBoard.ID)) {
            // The fleet's replay counts and guard board share this table; they are no batch.
            return Optional.empty();
        }
        Map<String, AttributeValue> item = Unavailability.read(STORE, () -> dynamo.getItem(r -> r.tableName(table)
                .key(Map.of("id", Attrs.s(id))).consistentRead(true)).item());
        if (item == null || item.isEmpty() || Attrs.expired(item, "expiresAt", clock.instant())) {
            return Optional.empty();
        }
        List<BulkReplay.Step> steps = item.getOrDefault("steps", AttributeValue.fromL(List.of())).l().stream()
                .map(v -> new BulkReplay.Step(Attrs.str(v.m(), "j"), Attrs.str(v.m(), "o"), Attrs.str(v.m(), "d"))).toList();
        return Optional.of(new BulkReplay(id, Attrs.str(item, "actor"), Attrs.str(item, "reason"), Attrs.str(item, "tenant"),
                FailureClass.valueOf(Attrs.str(item, "failureClass")), Attrs.integer(item, "selected"),
                BulkReplay.Status.valueOf(Attrs.str(item, "status")), Attrs.str(item, "canaryJobId"), Attrs.str(item, "canaryOutcome"), steps,
                Attrs.instantMillis(item, "startedAt"), Attrs.instantMillis(item, "updatedAt"), Attrs.instantMillis(item, "finishedAt"),
                Attrs.str(item, "detail"), java.util.Optional.ofNullable(Attrs.integer(item, "stepsOmitted")).orElse(0),
                java.util.Optional.ofNullable(Attrs.integer(item, "notReplayedOmitted")).orElse(0)));
    }

    private static AttributeValue step(BulkReplay.Step s) {
        Map<String, AttributeValue> m = new HashMap<>();
        m.put("j", Attrs.s(s.jobId()));
        m.put("o", Attrs.s(s.outcome()));
        optional(m, "d", s.detail());
        return AttributeValue.fromM(m);
    }

    private static void optional(Map<String, AttributeValue> item, String name, String value) {
        if (value != null && !value.isEmpty()) {
            item.put(name, Attrs.s(value));
        }
    }
}

package io.poisonguard.flows;

import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.sqs.model.Message;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11: a job is its tenant's. Two tenants may use the same job id: each job runs, fails, is
 * quarantined and replayed on its own; neither is dropped as the other's duplicate or parked behind the
 * other's quarantine. With {@code ledger.legacy-keys} (the upgrade from ledger items keyed by job id alone),
 * an old item of this tenant is moved to its scoped key, and a copy that meets another tenant's old item is
 * quarantined as {@code tenant-mismatch}, never dropped.
 */
@QuarkusTest
@TestProfile(TenantIdentityTest.Profile.class)
class TenantIdentityTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.ledger.legacy-keys", "true",
                    "poison-guard.replay.settle-time", "1s",
                    "poison-guard.systemic.same-signature", "100",
                    "poison-guard.systemic.max-quarantines", "1000");
        }
    }

    static final JobKey A1 = new JobKey("tenant-a", "shared-1");
    static final JobKey B1 = new JobKey("tenant-b", "shared-1");

    @Inject
    PermitReportHandler handler;

    final String operator = Tokens.of("olga", "operator");

    @AfterEach
    void tearDown() {
        handler.legacyReader(false);
    }

    private JobState stateOf(JobKey key) {
        return ledger.find(key).filter(key::owns).map(LedgerRecord::state).orElse(null);
    }

    private void send(JobKey key, boolean poison) {
        queues().send(poison ? Queues.permitV1("P-" + key) : Queues.permitV3("P-" + key),
                Queues.permitAttributes(key.jobId(), key.tenant(), poison ? 1 : 3));
    }

    private List<Message> notices(String jobId) {
        return queues().drain(names.noticesQueue()).stream().filter(m -> jobId.equals(Queues.attr(m, "job-id"))).toList();
    }

    @Test
    void twoTenantsUsingOneJobIdBothComplete() {
        send(A1, false);
        send(B1, false);
        await().atMost(Duration.ofSeconds(30)).until(() -> stateOf(A1) == JobState.SUCCEEDED && stateOf(B1) == JobState.SUCCEEDED);
        await().atMost(Duration.ofSeconds(10)).until(() -> queues().depth(names.noticesQueue()) >= 2);
        List<Message> notices = notices("shared-1");
        assertEquals(2, notices.size(), "each tenant's job sends its own notice");
        assertEquals(List.of("tenant-a", "tenant-b"), notices.stream().map(m -> Queues.attr(m, "tenant")).sorted().toList());

        // Within a tenant a job id still means one job: a duplicate copy is dropped.
        send(A1, false);
        await().atMost(Duration.ofSeconds(20)).until(() -> queues().depth(names.jobsQueue()) == 0);
        assertEquals(1, ledger.find(A1).orElseThrow().attempt(), "the duplicate did not run");
        assertTrue(notices("shared-1").isEmpty(), "and sent no notice");
    }

    @Test
    void oneTenantsQuarantineNeitherParksNorNamesAnotherTenantsJob() {
        JobKey a = new JobKey("tenant-a", "shared-2");
        JobKey b = new JobKey("tenant-b", "shared-2");
        registerTenant("tenant-a", "ACTIVE", "permit-report");
        registerTenant("tenant-b", "ACTIVE", "permit-report");
        send(a, true);
        await().atMost(Duration.ofSeconds(30)).until(() -> stateOf(a) == JobState.QUARANTINED && quarantine.find(a).isPresent());
        send(b, false);
        await().atMost(Duration.ofSeconds(30)).until(() -> stateOf(b) == JobState.SUCCEEDED);

        // Only tenant-a's job is quarantined: the job id names it without a tenant.
        given().auth().oauth2(operator).get("/ops/quarantine/shared-2").then().statusCode(200)
                .body("record.tenant", equalTo("tenant-a"));

        // Now both tenants' jobs are quarantined under one id: an operator must say whose.
        JobKey a3 = new JobKey("tenant-a", "shared-3");
        JobKey b3 = new JobKey("tenant-b", "shared-3");
        send(a3, true);
        send(b3, true);
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(a3).isPresent() && quarantine.find(b3).isPresent()
                && queues().depth(names.jobsQueue()) == 0);
        given().auth().oauth2(operator).get("/ops/quarantine/shared-3").then().statusCode(409)
                .body("detail", containsString("name one with ?tenant="));
        given().auth().oauth2(operator).get("/ops/quarantine/shared-3?tenant=tenant-b").then().statusCode(200)
                .body("record.tenant", equalTo("tenant-b"));

        // Replaying tenant-b's job sends tenant-b's payload and moves only tenant-b's job.
        handler.legacyReader(true);
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("reason", "reader fixed", "dryRun", false))
                .post("/ops/quarantine/shared-3/replay?tenant=tenant-b").then().statusCode(202);
        await().atMost(Duration.ofSeconds(30)).until(() -> stateOf(b3) == JobState.SUCCEEDED);
        assertEquals(2, ledger.find(b3).orElseThrow().generation());
        LedgerRecord stillParked = ledger.find(a3).orElseThrow();
        assertEquals(JobState.QUARANTINED, stillParked.state(), "tenant-a's job with the same id is untouched");
        assertEquals(1, stillParked.generation());
        assertTrue(quarantine.find(a3).isPresent());
    }

    /** An item as the ledger kept it before keys were scoped by tenant: under the bare job id. */
    private void oldItem(String jobId, String tenant, JobState state) {
        long now = System.currentTimeMillis();
        dynamo.putItem(b -> b.tableName(names.ledgerTable()).item(Map.ofEntries(
                Map.entry("jobId", AttributeValue.fromS(jobId)), Map.entry("tenant", AttributeValue.fromS(tenant)),
                Map.entry("jobType", AttributeValue.fromS("permit-report")), Map.entry("state", AttributeValue.fromS(state.name())),
                Map.entry("generation", AttributeValue.fromN("1")), Map.entry("attempt", AttributeValue.fromN("1")),
                Map.entry("failures", AttributeValue.fromM(Map.of())), Map.entry("history", AttributeValue.fromL(List.of())),
                Map.entry("firstSeen", AttributeValue.fromN(Long.toString(now))), Map.entry("updatedAt", AttributeValue.fromN(Long.toString(now))),
                Map.entry("version", AttributeValue.fromN("3")))));
    }

    @Test
    void anOldItemOfThisTenantIsMovedAndAnotherTenantsOldItemQuarantinesTheCopy() {
        oldItem("legacy-1", "tenant-a", JobState.SUCCEEDED);

        // tenant-b's job with that id cannot be told apart from tenant-a's old one: quarantined, not dropped, not run.
        JobKey b = new JobKey("tenant-b", "legacy-1");
        send(b, false);
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(b).isPresent());
        QuarantineRecord record = quarantine.find(b).orElseThrow();
        assertEquals("tenant-b", record.tenant());
        assertTrue(record.reason().contains("tenant-mismatch"), record.reason());
        assertFalse(record.reason().contains("tenant-a"), "the reason does not name the other tenant: " + record.reason());
        assertEquals(JobState.QUARANTINED, stateOf(b));
        await().atMost(Duration.ofSeconds(10)).until(() -> queues().depth(names.deadLetterQueue()) >= 1);

        // A late duplicate of tenant-a's old job: its item moves to the scoped key and the copy is dropped as done.
        JobKey a = new JobKey("tenant-a", "legacy-1");
        send(a, false);
        await().atMost(Duration.ofSeconds(30)).until(() -> queues().depth(names.jobsQueue()) == 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> dynamo.getItem(g -> g.tableName(names.ledgerTable())
                .key(Map.of("jobId", AttributeValue.fromS(a.storage()))).consistentRead(true)).hasItem());
        LedgerRecord moved = ledger.find(a).orElseThrow();
        assertEquals(JobState.SUCCEEDED, moved.state());
        assertEquals(1, moved.attempt(), "the duplicate did not run");
        assertEquals("legacy-1", moved.jobId());
        Optional<Map<String, AttributeValue>> old = Optional.ofNullable(dynamo.getItem(g -> g.tableName(names.ledgerTable())
                .key(Map.of("jobId", AttributeValue.fromS("legacy-1"))).consistentRead(true)).item()).filter(i -> !i.isEmpty());
        assertTrue(old.isEmpty(), "the old item is gone once moved");
        assertTrue(notices("legacy-1").isEmpty(), "neither copy sent a notice");
    }
}

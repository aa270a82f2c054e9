package io.poisonguard.flows;

import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.smallrye.jwt.build.Jwt;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Issue 12, item 6: operators are tenant-scoped. A token's {@code tenants} claim (names, or {@code *}) limits
 * what it lists, views, replays, resolves and reads; another tenant's job is invisible when not named and
 * forbidden when named; a bulk replay names one tenant and one failure class. Also: a bulk replay's state is
 * kept in DynamoDB (any instance answers for it, nothing stays in memory once it ends) and a bulk replay that
 * found nothing is audited; every operator API answer says {@code Cache-Control: no-store}.
 */
@QuarkusTest
@TestProfile(TenantScopedOperatorsTest.Profile.class)
class TenantScopedOperatorsTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.replay.settle-time", "1s");
        }
    }

    static final JobKey ALPHA_SHARED = new JobKey("t-alpha", "shared-7");
    static final JobKey BETA_SHARED = new JobKey("t-beta", "shared-7");
    static final JobKey ALPHA_OWN = new JobKey("t-alpha", "alpha-8");

    @Inject
    PermitReportHandler handler;
    @Inject
    io.poisonguard.replay.BulkReplays bulk;
    @Inject
    io.poisonguard.audit.AuditLog audit;

    final String alphaViewer = Tokens.scoped("vic", List.of("t-alpha"), "viewer");
    final String alphaOperator = Tokens.scoped("olga", List.of("t-alpha"), "operator");
    final String twoTenantOperator = Tokens.scoped("otto", List.of("t-alpha", "t-beta"), "operator");
    final String betaReader = Tokens.scoped("rita", List.of("t-beta"), "payload-reader");
    final String everyOperator = Tokens.of("root", "operator");

    @BeforeEach
    void quarantined() {
        for (JobKey k : List.of(ALPHA_SHARED, BETA_SHARED, ALPHA_OWN)) {
            if (ledger.find(k).filter(k::owns).isEmpty()) {
                queues().send(Queues.permitV1("P-" + k), Queues.permitAttributes(k.jobId(), k.tenant(), 1));
            }
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> List.of(ALPHA_SHARED, BETA_SHARED, ALPHA_OWN).stream()
                .allMatch(k -> quarantine.find(k).isPresent()));
    }

    private JobState stateOf(JobKey key) {
        return ledger.find(key).filter(key::owns).map(LedgerRecord::state).orElse(null);
    }

    @Test
    void aTokenListsAndViewsOnlyItsTenants() {
        given().auth().oauth2(alphaViewer).get("/ops/quarantine?status=any&limit=500").then().statusCode(200)
                .body("items.tenant", everyItem(equalTo("t-alpha"))).body("items.jobId", hasItem("alpha-8"));
        given().auth().oauth2(alphaViewer).get("/ops/quarantine?tenant=t-beta").then().statusCode(403)
                .body("detail", containsString("t-beta"));
        // The id both tenants use resolves to the token's own tenant, not to "ambiguous".
        given().auth().oauth2(alphaViewer).get("/ops/quarantine/shared-7").then().statusCode(200).body("record.tenant", equalTo("t-alpha"));
        given().auth().oauth2(everyOperator).get("/ops/quarantine/shared-7").then().statusCode(409);
        given().auth().oauth2(alphaViewer).get("/ops/quarantine/shared-7?tenant=t-beta").then().statusCode(403);
        given().auth().oauth2(alphaViewer).get("/ops/jobs/shared-7?tenant=t-beta").then().statusCode(403);
        // A token of several tenants names the one it lists.
        given().auth().oauth2(twoTenantOperator).get("/ops/quarantine").then().statusCode(400).body("detail", containsString("tenant"));
        given().auth().oauth2(twoTenantOperator).get("/ops/quarantine?tenant=t-beta").then().statusCode(200)
                .body("items.tenant", everyItem(equalTo("t-beta")));
        given().auth().oauth2(alphaViewer).get("/ops/tenants/t-beta").then().statusCode(403);
    }

    @Test
    void anotherTenantsJobCannotBeReplayedResolvedOrRead() {
        given().auth().oauth2(alphaOperator).contentType(ContentType.JSON).body(Map.of("reason", "x", "dryRun", false))
                .post("/ops/quarantine/shared-7/replay?tenant=t-beta").then().statusCode(403);
        given().auth().oauth2(alphaOperator).contentType(ContentType.JSON).body(Map.of("reason", "x"))
                .post("/ops/quarantine/shared-7/resolve?tenant=t-beta").then().statusCode(403);
        given().auth().oauth2(betaReader).get("/ops/quarantine/alpha-8/payload?reason=look").then().statusCode(404);
        given().auth().oauth2(betaReader).get("/ops/quarantine/alpha-8/payload?tenant=t-alpha&reason=look").then().statusCode(403);
        assertEquals(JobState.QUARANTINED, stateOf(BETA_SHARED), "t-beta's job is untouched");
        assertEquals(JobState.QUARANTINED, stateOf(ALPHA_OWN), "t-alpha's job is untouched");
        // Its own tenant's payload it reads, and the answer must not be cached anywhere.
        given().auth().oauth2(betaReader).get("/ops/quarantine/shared-7/payload?reason=look").then().statusCode(200)
                .header("Cache-Control", "no-store").body("body", containsString("P-t-beta"));
        given().auth().oauth2(alphaViewer).get("/ops/quarantine?tenant=t-alpha").then().header("Cache-Control", "no-store");
    }

    @Test
    void theAuditTrailShowsATokenOnlyItsTenantsEntries() {
        given().auth().oauth2(betaReader).get("/ops/quarantine/shared-7/payload?reason=audit check").then().statusCode(200);
        String betaViewer = Tokens.scoped("val", List.of("t-beta"), "viewer");
        given().auth().oauth2(betaViewer).get("/ops/audit").then().statusCode(200)
                .body("items.tenant", everyItem(equalTo("t-beta"))).body("items.action", hasItem("VIEW_PAYLOAD"));
        given().auth().oauth2(alphaViewer).get("/ops/audit").then().statusCode(200).body("items.tenant", not(hasItem("t-beta")));
        given().auth().oauth2(alphaViewer).get("/ops/audit?tenant=t-beta").then().statusCode(403);
        given().auth().oauth2(alphaViewer).get("/ops/audit?jobId=shared-7").then().statusCode(200)
                .body("items.tenant", not(hasItem("t-beta")));
    }

    /**
     * A job view read one job id's entries newest first, at most 10 pages, and only then kept the viewer's tenant's:
     * another tenant using the same job id pushed a tenant's own entries out of its view with about a thousand audited
     * calls on its own job. Each tenant's entries of a job are now read as that job's.
     */
    @Test
    void anotherTenantsAuditedCallsUnderTheSameJobIdDoNotPushATenantsEntriesOutOfItsJobView() {
        java.time.Instant start = java.time.Instant.now().minus(Duration.ofHours(2));
        audit.append(new io.poisonguard.audit.AuditEntry("shared-7", "t-alpha", start, "olga", io.poisonguard.audit.AuditAction.NOTE,
                "alpha's own note", "test", null, null, "NOTED", null));
        for (int i = 0; i < 1_050; i++) {
            audit.append(new io.poisonguard.audit.AuditEntry("shared-7", "t-beta", start.plus(Duration.ofSeconds(1 + i)), "bob",
                    io.poisonguard.audit.AuditAction.NOTE, "beta's note " + i, "test", null, null, "NOTED", null));
        }
        given().auth().oauth2(alphaViewer).get("/ops/audit?jobId=shared-7").then().statusCode(200)
                .body("items.reason", hasItem("alpha's own note")).body("items.tenant", everyItem(equalTo("t-alpha")));
        given().auth().oauth2(twoTenantOperator).get("/ops/audit?jobId=shared-7&tenant=t-alpha").then().statusCode(200)
                .body("items.reason", hasItem("alpha's own note")).body("items.tenant", everyItem(equalTo("t-alpha")));
        given().auth().oauth2(alphaViewer).get("/ops/quarantine/shared-7").then().statusCode(200)
                .body("audit.reason", hasItem("alpha's own note")).body("audit.tenant", everyItem(equalTo("t-alpha")));
        // The other tenant's view of its own job still shows its newest entries.
        given().auth().oauth2(Tokens.scoped("val", List.of("t-beta"), "viewer")).get("/ops/audit?jobId=shared-7&limit=5").then()
                .statusCode(200).body("items.reason", hasItem("beta's note 1049")).body("items.tenant", everyItem(equalTo("t-beta")));
    }

    @Test
    void aBulkReplayNamesOneTenantAndOneClassOfTheTokens() {
        given().auth().oauth2(alphaOperator).contentType(ContentType.JSON)
                .body(Map.of("failureClass", "PERMANENT", "reason", "r", "dryRun", true)).post("/ops/replays").then().statusCode(400)
                .body("detail", containsString("tenant"));
        given().auth().oauth2(alphaOperator).contentType(ContentType.JSON)
                .body(Map.of("tenant", "t-alpha", "reason", "r", "dryRun", true)).post("/ops/replays").then().statusCode(400)
                .body("detail", containsString("failureClass"));
        given().auth().oauth2(alphaOperator).contentType(ContentType.JSON)
                .body(Map.of("tenant", "t-beta", "failureClass", "PERMANENT", "reason", "r", "dryRun", false)).post("/ops/replays")
                .then().statusCode(403);
        assertEquals(JobState.QUARANTINED, stateOf(BETA_SHARED));
    }

    @Test
    void aBulkReplaysStateOutlivesItsRunAndAnEmptyOneIsAudited() {
        String id = given().auth().oauth2(alphaOperator).contentType(ContentType.JSON)
                .body(Map.of("tenant", "t-alpha", "failureClass", "THROTTLED", "reason", "nothing there", "dryRun", false))
                .post("/ops/replays").then().statusCode(200).body("status", equalTo("NOTHING_TO_REPLAY")).extract().path("id");
        assertEquals(0, bulk.runningHere(), "an ended batch is not held in memory");
        given().auth().oauth2(alphaViewer).get("/ops/replays/" + id).then().statusCode(200).body("status", equalTo("NOTHING_TO_REPLAY"))
                .body("tenant", equalTo("t-alpha")).body("failureClass", equalTo("THROTTLED"));
        given().auth().oauth2(Tokens.scoped("val", List.of("t-beta"), "viewer")).get("/ops/replays/" + id).then().statusCode(404);
        given().auth().oauth2(alphaViewer).get("/ops/audit?jobId=bulk:" + id).then().statusCode(200)
                .body("items[0].action", equalTo("BULK_REPLAY")).body("items[0].outcome", equalTo("NOTHING_TO_REPLAY"));
    }

    @Test
    void aTokenOfATenantNamedUnknownSeesAndTouchesNoRecordOfAJobThatNamedNoValidTenant() {
        JobKey tenantless = new JobKey(null, "stray-9");
        queues().send(Queues.permitV1("P-stray-9"), Queues.permitAttributes(tenantless.jobId(), "no valid tenant!", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(tenantless).isPresent());
        String unknownViewer = Tokens.scoped("uma", List.of("unknown"), "viewer");
        String unknownOperator = Tokens.scoped("uli", List.of("unknown"), "operator");

        given().auth().oauth2(unknownViewer).get("/ops/quarantine?status=any").then().statusCode(200).body("items", empty());
        given().auth().oauth2(unknownViewer).get("/ops/quarantine/stray-9").then().statusCode(404);
        // Its storage key is "/stray-9": as a job id, it reaches nothing either.
        given().urlEncodingEnabled(false).auth().oauth2(unknownViewer).get("/ops/quarantine/%2Fstray-9?tenant=unknown").then().statusCode(404);
        given().urlEncodingEnabled(false).auth().oauth2(unknownOperator).post("/ops/quarantine/%2Fstray-9/acknowledge?tenant=unknown")
                .then().statusCode(404);
        assertNull(quarantine.find(tenantless).orElseThrow().triage().acknowledgedBy(), "not acknowledged");
        // A token of every tenant sees it, as a job of no tenant.
        given().auth().oauth2(everyOperator).get("/ops/quarantine/stray-9").then().statusCode(200)
                .body("record.jobId", equalTo("stray-9")).body("record.tenant", nullValue());
    }

    @Test
    void aJobOfNoTenantStaysAddressableWhenATenantsJobSharesItsId() {
        JobKey tenantless = new JobKey(null, "shared-9");
        queues().send(Queues.permitV1("P-shared-9a"), Queues.permitAttributes(tenantless.jobId(), "no valid tenant!", 1));
        JobKey alphas = new JobKey("t-alpha", "shared-9");
        queues().send(Queues.permitV1("P-shared-9b"), Queues.permitAttributes(alphas.jobId(), "t-alpha", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(tenantless).isPresent() && quarantine.find(alphas).isPresent());

        // Two live records under one id: the tenant must be named, and "-" names no tenant (no tenant name can be "-").
        given().auth().oauth2(everyOperator).get("/ops/quarantine/shared-9").then().statusCode(409)
                .body("detail", containsString("(-, t-alpha)")).body("detail", containsString("- names no tenant"));
        given().auth().oauth2(everyOperator).get("/ops/quarantine/shared-9?tenant=-").then().statusCode(200)
                .body("record.jobId", equalTo("shared-9")).body("record.tenant", nullValue());
        given().auth().oauth2(everyOperator).post("/ops/quarantine/shared-9/acknowledge?tenant=-").then().statusCode(200);
        assertEquals("root", quarantine.find(tenantless).orElseThrow().triage().acknowledgedBy());
        assertNull(quarantine.find(alphas).orElseThrow().triage().acknowledgedBy(), "the tenant's job is untouched");
        // A job of no tenant is every tenant's business: a token scoped to some tenants cannot name it.
        given().auth().oauth2(alphaOperator).get("/ops/quarantine/shared-9?tenant=-").then().statusCode(403);
    }

    @Test
    void aTokenWithoutAUsableTenantsClaimIsUnauthenticated() {
        String none = Jwt.issuer("poison-guard").audience("poison-guard").subject("nobody").upn("nobody").groups(Set.of("operator"))
                .expiresIn(600).sign();
        String mixed = Jwt.issuer("poison-guard").audience("poison-guard").subject("mixed").upn("mixed").groups(Set.of("operator"))
                .claim("tenants", List.of("*", "t-alpha")).expiresIn(600).sign();
        String malformed = Jwt.issuer("poison-guard").audience("poison-guard").subject("bad").upn("bad").groups(Set.of("operator"))
                .claim("tenants", List.of("t alpha\n")).expiresIn(600).sign();
        for (String token : List.of(none, mixed, malformed)) {
            given().auth().oauth2(token).get("/ops/quarantine?tenant=t-alpha").then().statusCode(401);
        }
        String single = Jwt.issuer("poison-guard").audience("poison-guard").subject("solo").upn("solo").groups(Set.of("viewer"))
                .claim("tenants", "t-alpha").expiresIn(600).sign();
        given().auth().oauth2(single).get("/ops/quarantine").then().statusCode(200).body("items.tenant", everyItem(equalTo("t-alpha")));
    }
}

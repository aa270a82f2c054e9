package io.poisonguard.flows;

import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.pipeline.SystemicGuard;
import io.poisonguard.systemic.Signature;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12: the attacks on the operator API, each against the running service, each refused. Forged and
 * out-of-policy tokens are unauthenticated (401); each role does only its own work (403 otherwise); hostile
 * requests (tampered cursors, oversized ids, 200,000 job types) answer 400 problem+json, never 500; a token's
 * subject cannot forge an audit or log line; junk paths do not grow the metrics' URI labels; health, metrics and
 * OpenAPI are not on the API port. Tenant scope has its own class ({@link TenantScopedOperatorsTest}); hostile
 * senders too ({@link HostileIdentityTest}).
 */
@QuarkusTest
@TestProfile(SecurityAttacksTest.Profile.class)
class SecurityAttacksTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
    }

    @Inject
    AuditLog audit;
    @Inject
    SystemicGuard guard;
    @Inject
    io.poisonguard.pipeline.WorkerHealth health;

    final String operator = Tokens.of("olga", "operator");
    final String admin = Tokens.of("ada", "admin");

    @Test
    void aTamperedCursorIsABadRequest() {
        // Two quarantined jobs, so a page of one has a cursor.
        Queues queues = queues();
        queues.send(Queues.permitV1("P-C1"), Queues.permitAttributes("cursor-1", "tenant-s", 1));
        queues.send(Queues.permitV1("P-C2"), Queues.permitAttributes("cursor-2", "tenant-s", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("cursor-1")).isPresent() && quarantine.find(key("cursor-2")).isPresent());
        String cursor = given().auth().oauth2(operator).get("/ops/quarantine?limit=1").then().statusCode(200).extract().path("nextCursor");
        assertTrue(cursor != null && !cursor.isEmpty());

        String forged = Base64.getUrlEncoder().withoutPadding()
                .encodeToString("notAKey=S:x\u0000other=N:12".getBytes(StandardCharsets.UTF_8));
        for (String bad : List.of(forged, "not*base64!", cursor.substring(0, cursor.length() / 2))) {
            given().auth().oauth2(operator).get("/ops/quarantine?limit=1&cursor=" + bad).then().statusCode(400)
                    .contentType(containsString("application/problem+json"));
        }
    }

    @Test
    void anOversizedJobIdInAPathIsABadRequest() {
        String longId = "j".repeat(3_000);
        given().auth().oauth2(operator).get("/ops/quarantine/" + longId).then().statusCode(400)
                .body("detail", containsString("job id"));
        given().auth().oauth2(operator).get("/ops/jobs/" + longId + "?tenant=tenant-s").then().statusCode(400);
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("reason", "x", "dryRun", true))
                .post("/ops/quarantine/" + longId + "/replay").then().statusCode(400);
    }

    @Test
    void aTenantWithTooManyOrMalformedJobTypesIsABadRequest() {
        List<String> many = IntStream.range(0, 200_000).mapToObj(i -> "type-" + i).toList();
        given().auth().oauth2(admin).contentType(ContentType.JSON)
                .body(Map.of("status", "ACTIVE", "jobTypes", many, "reason", "load"))
                .put("/ops/tenants/tenant-big").then().statusCode(400).body("detail", containsString("at most"));
        given().auth().oauth2(admin).contentType(ContentType.JSON)
                .body(Map.of("status", "ACTIVE", "jobTypes", List.of("ops@corp.example.org"), "reason", "x"))
                .put("/ops/tenants/tenant-big").then().statusCode(400);
        given().auth().oauth2(admin).contentType(ContentType.JSON)
                .body(Map.of("status", "ACTIVE", "jobTypes", List.of("permit-report"), "reason", "x"))
                .put("/ops/tenants/" + "t".repeat(300)).then().statusCode(400);
    }

    /** The claims of a token the service accepts; each attack changes one thing. */
    static Map<String, Object> validClaims() {
        long now = java.time.Instant.now().getEpochSecond();
        Map<String, Object> c = new java.util.LinkedHashMap<>();
        c.put("iss", "poison-guard");
        c.put("aud", "poison-guard");
        c.put("sub", "mal");
        c.put("upn", "mal");
        c.put("groups", List.of("operator"));
        c.put("tenants", List.of("*"));
        c.put("iat", now);
        c.put("exp", now + 600);
        return c;
    }

    static String signed(java.util.function.Consumer<Map<String, Object>> change) {
        Map<String, Object> c = validClaims();
        change.accept(c);
        return io.smallrye.jwt.build.Jwt.claims(c).sign();
    }

    static String b64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void forgedAndOutOfPolicyTokensAreUnauthenticated() throws Exception {
        long now = java.time.Instant.now().getEpochSecond();
        given().auth().oauth2(signed(c -> { })).get("/ops/quarantine").then().statusCode(200);

        Map<String, String> attacks = new java.util.LinkedHashMap<>();
        String body = b64(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(validClaims()));
        attacks.put("alg none", b64("{\"alg\":\"none\",\"typ\":\"JWT\"}") + "." + body + ".");
        String publicKey = org.eclipse.microprofile.config.ConfigProvider.getConfig().getOptionalValue("mp.jwt.verify.publickey", String.class)
                .orElse("a-secret-an-attacker-guessed-0123456789abcdef");
        attacks.put("HS256 signed with the public key", io.smallrye.jwt.build.Jwt.claims(validClaims())
                .jws().algorithm(io.smallrye.jwt.algorithm.SignatureAlgorithm.HS256)
                .sign(new javax.crypto.spec.SecretKeySpec(publicKey.getBytes(StandardCharsets.UTF_8), "HmacSHA256")));
        java.security.KeyPairGenerator rsa = java.security.KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        attacks.put("signed with a foreign key", io.smallrye.jwt.build.Jwt.claims(validClaims()).sign(rsa.generateKeyPair().getPrivate()));
        attacks.put("wrong issuer", signed(c -> c.put("iss", "evil")));
        attacks.put("expired", signed(c -> {
            c.put("iat", now - 7_200);
            c.put("exp", now - 3_600);
        }));
        attacks.put("no subject", signed(c -> c.remove("sub")));
        attacks.put("no groups", signed(c -> c.remove("groups")));
        attacks.put("no audience", signed(c -> c.remove("aud")));
        attacks.put("another service's audience", signed(c -> c.put("aud", "billing")));
        attacks.put("issued in the future", signed(c -> {
            c.put("iat", now + 3_600);
            c.put("exp", now + 4_000);
        }));
        attacks.put("valid for a year", signed(c -> c.put("exp", now + 365L * 86_400)));
        attacks.put("no tenants claim", signed(c -> c.remove("tenants")));
        attacks.put("tenants mixing * and names", signed(c -> c.put("tenants", List.of("*", "t-1"))));
        attacks.forEach((attack, token) -> {
            int status = given().auth().oauth2(token).get("/ops/quarantine").then().extract().statusCode();
            org.junit.jupiter.api.Assertions.assertEquals(401, status, attack);
        });
        given().get("/ops/quarantine").then().statusCode(401);
    }

    @Test
    void eachRoleDoesOnlyItsOwnWork() {
        String viewer = Tokens.of("vic", "viewer");
        String reader = Tokens.of("rita", "payload-reader");
        String none = Tokens.of("nobody");
        Map<String, Object> replay = Map.of("reason", "r", "dryRun", false);
        given().auth().oauth2(viewer).contentType(ContentType.JSON).body(replay).post("/ops/quarantine/any-job/replay?tenant=tenant-s")
                .then().statusCode(403);
        given().auth().oauth2(viewer).contentType(ContentType.JSON).body(Map.of("reason", "r"))
                .post("/ops/quarantine/any-job/resolve?tenant=tenant-s").then().statusCode(403);
        given().auth().oauth2(viewer).get("/ops/quarantine/any-job/payload?tenant=tenant-s&reason=r").then().statusCode(403);
        given().auth().oauth2(viewer).contentType(ContentType.JSON).body(Map.of("status", "ACTIVE", "reason", "r"))
                .put("/ops/tenants/tenant-s").then().statusCode(403);
        given().auth().oauth2(operator).get("/ops/quarantine/any-job/payload?tenant=tenant-s&reason=r").then().statusCode(403);
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("status", "ACTIVE", "reason", "r"))
                .put("/ops/tenants/tenant-s").then().statusCode(403);
        given().auth().oauth2(reader).get("/ops/quarantine").then().statusCode(403);
        given().auth().oauth2(reader).contentType(ContentType.JSON).body(replay).post("/ops/quarantine/any-job/replay?tenant=tenant-s")
                .then().statusCode(403);
        given().auth().oauth2(admin).get("/ops/quarantine").then().statusCode(403);
        given().auth().oauth2(admin).contentType(ContentType.JSON).body(replay).post("/ops/quarantine/any-job/replay?tenant=tenant-s")
                .then().statusCode(403);
        given().auth().oauth2(none).get("/ops/quarantine").then().statusCode(403);
        given().auth().oauth2(none).get("/ops/audit").then().statusCode(403);
    }

    @Test
    void junkPathsDoNotGrowTheMetricsUriLabelsAndManagementIsNotOnTheApiPort() {
        for (int i = 0; i < 300; i++) {
            given().get("/ops/junk-" + i).then().statusCode(org.hamcrest.Matchers.oneOf(401, 404));
            given().auth().oauth2(operator).get("/ops/junk-" + i + "/deeper").then().statusCode(404);
            given().get("/junk-" + i).then().statusCode(404);
            given().delete("/ops/quarantine/junk-" + i + "/replay").then().statusCode(org.hamcrest.Matchers.oneOf(401, 404, 405));
            given().auth().oauth2(operator).contentType(ContentType.JSON).body("{").post("/ops/junk-" + i).then()
                    .statusCode(org.hamcrest.Matchers.oneOf(400, 404, 405, 415));
            given().auth().oauth2("not-a-token-" + i).get("/ops/x-" + i).then().statusCode(401);
        }
        String metrics = management().get("/q/metrics").then().statusCode(200).extract().asString();
        java.util.Set<String> uris = new java.util.TreeSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("http_server_requests_seconds_count\\{[^}]*uri=\"([^\"]*)\"").matcher(metrics);
        while (m.find()) {
            uris.add(m.group(1));
        }
        assertFalse(uris.stream().anyMatch(u -> u.contains("junk")), "no junk path became a label: " + uris);
        assertTrue(uris.size() < 40, "URI labels stay few: " + uris);
        for (String path : List.of("/q/metrics", "/q/health/ready", "/q/openapi")) {
            given().get(path).then().statusCode(404);
        }
        // The console's pages run only their own script and cannot be framed.
        given().get("/console/").then().statusCode(200)
                .header("Content-Security-Policy", containsString("default-src 'self'"))
                .header("Content-Security-Policy", containsString("frame-ancestors 'none'"))
                .header("X-Content-Type-Options", "nosniff");
    }

    @Test
    void aNewlineInTheTokenSubjectDoesNotForgeAnAuditLine() {
        String forger = Tokens.of("eve\n2026-12-01 INFO [io.poisonguard] forged", "admin");
        given().auth().oauth2(forger).contentType(ContentType.JSON)
                .body(Map.of("status", "ACTIVE", "jobTypes", List.of("permit-report"), "reason", "onboarding"))
                .put("/ops/tenants/tenant-eve").then().statusCode(200).body("updatedBy", equalTo("eve?2026-12-01 INFO [io.poisonguard] forged"));
        AuditEntry entry = audit.recent(50).stream().filter(e -> e.jobId().equals("tenant:tenant-eve")).findFirst().orElseThrow();
        assertFalse(entry.actor().contains("\n"), entry.actor());
    }

    @Test
    void aNewlineInTheTokenSubjectDoesNotForgeAConsumptionAuditLine() {
        String forger = Tokens.of("eve\n2026-12-01 INFO [io.poisonguard] forged", "operator");
        given().auth().oauth2(forger).contentType(ContentType.JSON).body(Map.of("reason", "resumed by a forger"))
                .post("/ops/consumption/resume").then().statusCode(200);
        AuditEntry entry = audit.forJob("system:consumption", 100).stream().filter(e -> e.reason().equals("resumed by a forger"))
                .findFirst().orElseThrow();
        assertEquals("eve?2026-12-01 INFO [io.poisonguard] forged", entry.actor());
    }

    @Test
    void aTokenOfOneTenantCannotResumeConsumptionForEveryTenantNorSeeTheServiceWideRejectionCounts() {
        String scopedOperator = Tokens.scoped("oona", List.of("t-alpha"), "operator");
        given().auth().oauth2(scopedOperator).contentType(ContentType.JSON).body(Map.of("reason", "my tenant's jobs look fine"))
                .post("/ops/consumption/resume").then().statusCode(403);
        assertTrue(audit.forJob("system:consumption", 100).stream().noneMatch(e -> e.reason().equals("my tenant's jobs look fine")),
                "nothing was resumed");

        given().auth().oauth2(Tokens.scoped("vic", List.of("t-alpha"), "viewer")).get("/ops/overview").then().statusCode(200)
                .body("rejections", org.hamcrest.Matchers.nullValue());
        given().auth().oauth2(Tokens.of("vera", "viewer")).get("/ops/overview").then().statusCode(200)
                .body("rejections.byReason", org.hamcrest.Matchers.notNullValue());
    }

    @Test
    void aTenantScopedViewerSeesTheSystemicTripButNotItsSampleJobIds() {
        Signature signature = new Signature(FailureClass.PERMANENT, "IllegalStateException", "Provider.standing");
        try {
            for (int i = 0; i < 100 && guard.trip().isEmpty(); i++) {
                guard.holdFailure(signature, "permit-report", "another-tenants-job-" + i);
            }
            given().auth().oauth2(Tokens.of("vic", "viewer")).get("/ops/consumption").then().statusCode(200)
                    .body("trip.sampleJobIds", hasItem(startsWith("another-tenants-job-")));
            given().auth().oauth2(Tokens.scoped("val", List.of("tenant-s"), "viewer")).get("/ops/consumption").then().statusCode(200)
                    .body("trip.signature", equalTo(signature.describe())).body("trip", not(hasKey("sampleJobIds")));
        } finally {
            guard.resume("SecurityAttacksTest");
        }
    }

    /**
     * A handler that ended with an error the JVM may not survive makes the worker unfit, and the reason names its job, which
     * may be any tenant's: {@code GET /ops/consumption}'s {@code worker} gave it to a token of one tenant. (This leaves the
     * worker of this class's own application unfit; nothing else here reads its fitness.)
     */
    @Test
    void aTenantScopedViewerIsToldTheWorkerIsUnfitButNotOnWhoseJob() {
        health.fatal("another-tenants-fatal-job", "OutOfMemoryError");
        given().auth().oauth2(Tokens.of("vic", "viewer")).get("/ops/consumption").then().statusCode(200)
                .body("worker", org.hamcrest.Matchers.containsString("another-tenants-fatal-job"));
        given().auth().oauth2(Tokens.scoped("val", List.of("tenant-s"), "viewer")).get("/ops/consumption").then().statusCode(200)
                .body("worker", org.hamcrest.Matchers.containsString("OutOfMemoryError"))
                .body("worker", not(org.hamcrest.Matchers.containsString("another-tenants-fatal-job")));
    }

    /**
     * Two tenants' jobs share an id. The one tenant's operator fills the id's audit trail (a refused action is audited,
     * so repeating it is enough); the other tenant's newest entry must still be in its own view. The trail was read
     * oldest first up to the limit and filtered by tenant afterwards, so 100 of the other tenant's older entries left
     * nothing of this tenant's.
     */
    @Test
    void anotherTenantsEntriesUnderTheSameJobIdDoNotPushATenantsOwnOutOfItsAuditView() {
        java.time.Instant start = java.time.Instant.now().minusSeconds(3600);
        for (int i = 0; i < 150; i++) {
            audit.append(new AuditEntry("shared-7", "tenant-beta", start.plusMillis(i), "bob", io.poisonguard.audit.AuditAction.ACKNOWLEDGE,
                    "again", "test", 1, 1, "REFUSED_ALREADY_ACKNOWLEDGED", null));
        }
        audit.append(new AuditEntry("shared-7", "tenant-alpha", start.plusSeconds(60), "alice", io.poisonguard.audit.AuditAction.RESOLVE,
                "duplicate of ticket 12", "test", 1, 1, "RESOLVED", null));

        String alphaViewer = Tokens.scoped("avi", List.of("tenant-alpha"), "viewer");
        given().auth().oauth2(alphaViewer).get("/ops/audit?jobId=shared-7&limit=100").then().statusCode(200)
                .body("items.action", hasItem("RESOLVE")).body("items.tenant", not(hasItem("tenant-beta")));
        given().auth().oauth2(operator).get("/ops/audit?jobId=shared-7&tenant=tenant-alpha&limit=10").then().statusCode(200)
                .body("items.action", hasItem("RESOLVE"));
    }

    /** A limit that is no number, or one past what an int holds, is the caller's mistake: 400 naming limit, never a 404. */
    @Test
    void aLimitThatIsNotANumberOrOverflowsIsABadRequestNamingIt() {
        for (String path : List.of("/ops/quarantine?limit=abc", "/ops/quarantine?limit=99999999999", "/ops/audit?limit=abc",
                "/ops/audit?limit=99999999999", "/ops/audit?jobId=any-job&limit=1.5")) {
            given().auth().oauth2(operator).get(path).then().statusCode(400)
                    .contentType(containsString("application/problem+json")).body("detail", containsString("limit"));
        }
        // Parsed by the resource, it is still an integer to the API's clients.
        management().get("/q/openapi?format=json").then().statusCode(200)
                .body("paths.'/ops/quarantine'.get.parameters.find { it.name == 'limit' }.schema.type", equalTo("integer"))
                .body("paths.'/ops/audit'.get.parameters.find { it.name == 'limit' }.schema.type", equalTo("integer"));
    }

    @Test
    void anOlderThanReachingPastTheFirstInstantIsABadRequest() {
        given().auth().oauth2(operator).get("/ops/quarantine?olderThan=P400000000000D").then().statusCode(400)
                .contentType(containsString("application/problem+json")).body("detail", containsString("olderThan"));
    }

    @Test
    void aJobIdWithASlashReachesNoOtherJobsRecord() {
        JobKey own = new JobKey("tenant-s", "slash-1");
        queues().send(Queues.permitV1("P-SLASH"), Queues.permitAttributes(own.jobId(), own.tenant(), 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(own).isPresent());
        // "tenant-s/slash-1" is a job id of its own, not the storage key of tenant-s's job slash-1.
        assertFalse(quarantine.acknowledge(new JobKey("tenant-s", "tenant-s/slash-1"), "mallory", Instant.now()), "no record to acknowledge");
        given().urlEncodingEnabled(false).auth().oauth2(operator).get("/ops/quarantine/tenant-s%2Fslash-1?tenant=tenant-s")
                .then().statusCode(404);
        given().urlEncodingEnabled(false).auth().oauth2(operator).post("/ops/quarantine/tenant-s%2Fslash-1/acknowledge?tenant=tenant-s")
                .then().statusCode(404);
        assertNull(quarantine.find(own).orElseThrow().triage().acknowledgedBy(), "slash-1 is not acknowledged");
        assertTrue(audit.forJob("tenant-s/slash-1", 10).isEmpty(), "nothing is audited under the other id");
    }

    @Test
    void aRecordFromBeforeScopedKeysIsStillItsTenantsToReadAndAcknowledge() {
        JobKey scoped = new JobKey("tenant-s", "legacy-2");
        queues().send(Queues.permitV1("P-LEGACY"), Queues.permitAttributes(scoped.jobId(), scoped.tenant(), 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(scoped).isPresent());
        // Moved to how it was kept before keys were scoped by tenant: under the bare job id, without the job attribute.
        Map<String, AttributeValue> item = new HashMap<>(dynamo.getItem(b -> b.tableName(names.quarantineTable())
                .key(Map.of("jobId", AttributeValue.fromS(scoped.storage()))).consistentRead(true)).item());
        dynamo.deleteItem(b -> b.tableName(names.quarantineTable()).key(Map.of("jobId", AttributeValue.fromS(scoped.storage()))));
        item.put("jobId", AttributeValue.fromS(scoped.jobId()));
        item.remove("job");
        dynamo.putItem(b -> b.tableName(names.quarantineTable()).item(item));

        assertEquals(List.of(scoped), quarantine.keysOf(scoped.jobId(), Instant.now()));
        assertTrue(quarantine.acknowledge(scoped, "olga", Instant.now()), "its tenant acknowledges it");
        assertEquals("olga", quarantine.find(scoped).orElseThrow().triage().acknowledgedBy());
        assertTrue(quarantine.find(new JobKey("tenant-t", scoped.jobId())).isEmpty(), "another tenant does not reach it");
    }
}

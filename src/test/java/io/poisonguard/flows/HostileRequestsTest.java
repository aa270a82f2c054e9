package io.poisonguard.flows;

import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, item 9 (in part): requests an attacker or a careless script sends to the operator API answer
 * 400 problem+json naming what is wrong, never 500 with a stack trace; and a token's subject cannot forge
 * an audit or log line.
 */
@QuarkusTest
@TestProfile(HostileRequestsTest.Profile.class)
class HostileRequestsTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
    }

    @Inject
    AuditLog audit;

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

    @Test
    void tokensWithoutThisAudienceIssuedInTheFutureOrTooLongLivedAreUnauthenticated() {
        long now = java.time.Instant.now().getEpochSecond();
        String noAudience = io.smallrye.jwt.build.Jwt.issuer("poison-guard").subject("mal").upn("mal")
                .groups(java.util.Set.of("operator")).expiresIn(600).sign();
        String otherAudience = io.smallrye.jwt.build.Jwt.issuer("poison-guard").audience("billing").subject("mal").upn("mal")
                .groups(java.util.Set.of("operator")).expiresIn(600).sign();
        String future = io.smallrye.jwt.build.Jwt.issuer("poison-guard").audience("poison-guard").subject("mal").upn("mal")
                .groups(java.util.Set.of("operator")).issuedAt(now + 3_600).expiresAt(now + 4_000).sign();
        String forAYear = io.smallrye.jwt.build.Jwt.issuer("poison-guard").audience("poison-guard").subject("mal").upn("mal")
                .groups(java.util.Set.of("operator")).issuedAt(now).expiresAt(now + 365L * 86_400).sign();
        for (String token : List.of(noAudience, otherAudience, future, forAYear)) {
            given().auth().oauth2(token).get("/ops/quarantine").then().statusCode(401);
        }
        given().auth().oauth2(operator).get("/ops/quarantine").then().statusCode(200);
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
}

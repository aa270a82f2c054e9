package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;

import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Invariant 7: every kind of bad input ends in quarantine with a named reason, and no worker dies. */
@QuarkusTest
@TestProfile(BadInputTest.Profile.class)
class BadInputTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
    }


    /** job id -> (body, attributes, expected reason fragment, expected class) */
    record Case(String body, Map<String, String> attributes, String reason, FailureClass failureClass) {
    }

    @Test
    void eachBadInputIsQuarantinedWithANamedReasonAndHealthyWorkStillCompletes() {
        Queues queues = new Queues(sqs, names);
        Map<String, Case> cases = new LinkedHashMap<>();
        Map<String, String> invalidUtf8 = Queues.permitAttributes("bad-utf8", "tenant-a", 3);
        invalidUtf8.put("content-transfer-encoding", "base64");
        invalidUtf8.put("charset", "UTF-8");
        cases.put("bad-utf8", new Case(Base64.getEncoder().encodeToString(new byte[]{'{', (byte) 0xC3, 0x28, '}'}), invalidUtf8,
                "undecodable-body", FailureClass.ADMISSION));
        cases.put("bad-size", new Case("{\"pad\":\"" + "x".repeat(300 * 1024) + "\"}", Queues.permitAttributes("bad-size", "tenant-a", 3),
                "body-too-large", FailureClass.ADMISSION));
        cases.put("bad-schema", new Case(Queues.permitV3("P-S"), Queues.permitAttributes("bad-schema", "tenant-a", 99),
                "unknown-schema-version", FailureClass.ADMISSION));
        cases.put("bad-json", new Case("{\"permitId\": \"P-J\", \"applicant\": {", Queues.permitAttributes("bad-json", "tenant-a", 3),
                "PERMANENT limit reached", FailureClass.PERMANENT));
        Map<String, String> noType = Queues.permitAttributes("bad-no-type", "tenant-a", 3);
        noType.remove("job-type");
        cases.put("bad-no-type", new Case(Queues.permitV3("P-T"), noType, "missing-job-type", FailureClass.ADMISSION));
        Map<String, String> noTenant = Queues.permitAttributes("bad-no-tenant", "tenant-a", 3);
        noTenant.remove("tenant");
        cases.put("bad-no-tenant", new Case(Queues.permitV3("P-N"), noTenant, "missing-tenant", FailureClass.ADMISSION));
        cases.put("bad-1mib", new Case("y".repeat(1024 * 1024 - 200), Queues.permitAttributes("bad-1mib", "tenant-a", 3),
                "body-too-large", FailureClass.ADMISSION));

        Map<String, String> messageIds = new HashMap<>();
        cases.forEach((jobId, c) -> messageIds.put(jobId, queues.send(c.body(), c.attributes())));
        queues.send(Queues.permitV3("P-OK"), Queues.permitAttributes("good-after-bad", "tenant-a", 3));

        await().atMost(Duration.ofSeconds(60)).until(() ->
                cases.keySet().stream().allMatch(id -> state(id) == JobState.QUARANTINED && quarantine.find(key(id)).isPresent())
                        && state("good-after-bad") == JobState.SUCCEEDED && queues.depth(names.jobsQueue()) == 0);

        Map<String, Message> dead = queues.drain(names.deadLetterQueue()).stream()
                .collect(Collectors.toMap(m -> Queues.attr(m, "job-id"), Function.identity()));
        cases.forEach((jobId, c) -> {
            QuarantineRecord q = quarantine.find(key(jobId)).orElseThrow(() -> new AssertionError("no quarantine record for " + jobId));
            assertEquals(c.failureClass(), q.failureClass(), jobId);
            assertTrue(q.reason().contains(c.reason()), jobId + ": " + q.reason());
            LedgerRecord r = ledger.find(key(jobId)).orElseThrow();
            assertEquals(1, r.attempt(), jobId + " took one attempt");
            Message d = dead.get(jobId);
            assertTrue(d != null, "dead-letter copy of " + jobId);
            assertEquals(c.body(), d.body(), jobId + ": original body preserved");
            assertTrue(Queues.attr(d, "quarantine-reason").contains(c.reason()), jobId);
            assertEquals(c.failureClass().name(), Queues.attr(d, "failure-class"));
        });
        assertEquals(1024L * 1024 - 200, quarantine.find(key("bad-1mib")).orElseThrow().diagnostics().sizeBytes());
        assertEquals(cases.size(), dead.size(), "one dead-letter copy per bad input");
        assertEquals("PERMANENT", ledger.find(key("bad-json")).orElseThrow().history().get(0).failureClass().name());

        management().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
        String viewer = Tokens.of("vera", "viewer");
        given().auth().oauth2(viewer).when().get("/ops/jobs/bad-schema").then().statusCode(200).body("state", equalTo("QUARANTINED"));
        given().auth().oauth2(viewer).when().get("/ops/quarantine/bad-utf8").then().statusCode(200)
                .body("record.failureClass", equalTo("ADMISSION"))
                .body("record.reason", org.hamcrest.Matchers.containsString("undecodable-body"));
        List<String> reasons = cases.keySet().stream().map(id -> id + " -> " + quarantine.find(key(id)).orElseThrow().reason()).toList();
        System.out.println("\n[bad input] " + String.join("\n[bad input] ", reasons));
    }

}

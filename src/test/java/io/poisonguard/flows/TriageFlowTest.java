package io.poisonguard.flows;

import io.poisonguard.failure.FailureClass;
import com.sun.net.httpserver.HttpServer;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ScriptedHandler;
import io.poisonguard.triage.TriageActions;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: quarantined work has an owner, a triage state and a review cadence. The owner is the most specific
 * match of the ownership map (else the default owner, flagged); its quarantine alerts reach its own route; an
 * operator acknowledges, assigns and annotates (notes scrubbed, everything audited); a record past its owner's
 * deadline is escalated once per stage to the owner's escalation route. A disposable job type's poison is dropped
 * (counted, logged, nothing kept) beside a kept type's, which is quarantined.
 */
@QuarkusTest
@TestProfile(TriageFlowTest.Profile.class)
class TriageFlowTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(TeamRoutes.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> c = new HashMap<>();
            c.put("poison-guard.ownership.owners.\"permits\".job-types", "permit-report");
            c.put("poison-guard.ownership.owners.\"permits\".tenants", "t-permits");
            c.put("poison-guard.ownership.owners.\"permits\".acknowledge-within", "3s");
            c.put("poison-guard.ownership.owners.\"permits\".resolve-within", "6s");
            c.put("poison-guard.ownership.owners.\"strays\".job-types", "stray-report");
            c.put("poison-guard.ownership.owners.\"strays\".acknowledge-within", "2s");
            c.put("poison-guard.ownership.owners.\"strays\".resolve-within", "1h");
            c.put("poison-guard.ownership.check-interval", "1s");
            c.put("poison-guard.disposable-job-types", "scripted");
            // Every test here quarantines permit reports alike on purpose (a schema no reader takes), one after another:
            // five in a row is what the systemic guard takes for a bad deploy, and these tests are about triage.
            c.put("poison-guard.systemic.same-signature", "1000");
            return c;
        }
    }

    /** Two owner routes on a local HTTP server: the team's alerts and its escalations, each kept apart. */
    public static class TeamRoutes implements QuarkusTestResourceLifecycleManager {
        static final Map<String, List<String>> RECEIVED = new ConcurrentHashMap<>();
        private HttpServer server;

        @Override
        public Map<String, String> start() {
            try {
                server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            server.createContext("/", ex -> {
                RECEIVED.computeIfAbsent(ex.getRequestURI().getPath(), p -> new CopyOnWriteArrayList<>())
                        .add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
                ex.sendResponseHeaders(204, -1);
                ex.close();
            });
            server.start();
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            return Map.of("poison-guard.ownership.owners.\"permits\".webhook", base + "/permits",
                    "poison-guard.ownership.owners.\"permits\".escalation-webhook", base + "/permits-escalations");
        }

        @Override
        public void stop() {
            server.stop(0);
        }

        static List<String> at(String path) {
            return RECEIVED.getOrDefault(path, List.of());
        }
    }

    final String operator = Tokens.of("olga", "operator");
    final String viewer = Tokens.of("vic", "viewer");

    @jakarta.inject.Inject
    io.poisonguard.triage.EscalationCheck escalation;

    @io.quarkus.test.common.http.TestHTTPResource("/")
    java.net.URL url;

    private String triageCommand(String token, String... words) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("node", "scripts/triage.mjs", "--url", url.toString(), "--token", token));
        cmd.addAll(List.of(words));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        return p.exitValue() + " " + out.strip();
    }

    @Test
    void theTriageCommandAcknowledgesAssignsAndAnnotates() throws Exception {
        quarantined(new JobKey("t-cli", "cli-1"));
        String[] job = {"--job", "cli-1", "--tenant", "t-cli"};
        assertTrue(triageCommand(viewer, concat(job, "acknowledge")).startsWith("1 403"), "a viewer token is refused");
        String ack = triageCommand(operator, concat(job, "acknowledge"));
        assertTrue(ack.startsWith("0 ") && ack.contains("ACKNOWLEDGED") && ack.contains("acknowledged by olga"), ack);
        String assign = triageCommand(operator, concat(job, "assign", "Dana R.", "--reason", "on call"));
        assertTrue(assign.startsWith("0 ") && assign.contains("assigned to Dana R."), assign);
        String note = triageCommand(operator, concat(job, "note", "waiting on the provider"));
        assertTrue(note.startsWith("0 ") && note.contains("1 notes"), note);
        assertTrue(triageCommand(operator, concat(job, "assign", "Dana R.")).startsWith("2 "), "assign without --reason is refused locally");
        String show = triageCommand(viewer, concat(job, "show"));
        assertTrue(show.startsWith("0 cli-1: ACKNOWLEDGED, owner operations (default)"), show);
    }

    private static String[] concat(String[] a, String... b) {
        return java.util.stream.Stream.concat(java.util.Arrays.stream(a), java.util.Arrays.stream(b)).toArray(String[]::new);
    }

    private QuarantineRecord quarantined(JobKey key) {
        queues().send(Queues.permitV1("P-" + key.jobId()), Queues.permitAttributes(key.jobId(), key.tenant(), 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key).isPresent());
        return quarantine.find(key).orElseThrow();
    }

    @Test
    void theMostSpecificOwnerTakesTheJobAndANobodysJobGoesToTheDefaultOwnerFlagged() {
        QuarantineRecord owned = quarantined(new JobKey("t-permits", "owned-1"));
        assertEquals("permits", owned.triage().owner());
        assertFalse(owned.triage().ownerDefaulted());
        QuarantineRecord orphan = quarantined(new JobKey("t-elsewhere", "orphan-1"));
        assertEquals("operations", orphan.triage().owner());
        assertTrue(orphan.triage().ownerDefaulted(), "no owner matched: flagged");
        await().atMost(Duration.ofSeconds(10)).until(() -> TeamRoutes.at("/permits").stream().anyMatch(a -> a.contains("owned-1")));
        String alert = TeamRoutes.at("/permits").stream().filter(a -> a.contains("owned-1")).findFirst().orElseThrow();
        assertTrue(alert.contains("\"owner\":\"permits\""), alert);
        assertTrue(TeamRoutes.at("/permits").stream().noneMatch(a -> a.contains("orphan-1")), "another owner's job does not reach this team");
        given().auth().oauth2(viewer).get("/ops/quarantine/orphan-1?tenant=t-elsewhere").then().statusCode(200)
                .body("triageState", equalTo("NEW")).body("record.triage.owner", equalTo("operations"))
                .body("record.triage.ownerDefaulted", equalTo(true));
    }

    @Test
    void anOperatorAcknowledgesAssignsAndAnnotatesAndEveryStepIsAudited() {
        JobKey key = new JobKey("t-other", "triage-1");
        quarantined(key);
        given().auth().oauth2(viewer).post("/ops/quarantine/triage-1/acknowledge?tenant=t-other").then().statusCode(403);
        given().auth().oauth2(operator).post("/ops/quarantine/triage-1/acknowledge?tenant=t-other").then().statusCode(200)
                .body("triageState", equalTo("ACKNOWLEDGED")).body("triage.acknowledgedBy", equalTo("olga"));
        given().auth().oauth2(operator).post("/ops/quarantine/triage-1/acknowledge?tenant=t-other").then().statusCode(409)
                .body("detail", containsString("already acknowledged by olga"));
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("assignee", "Dana R.", "reason", "on call this week"))
                .post("/ops/quarantine/triage-1/assign?tenant=t-other").then().statusCode(200).body("triage.assignee", equalTo("Dana R."));
        given().auth().oauth2(operator).contentType(ContentType.JSON)
                .body(Map.of("text", "provider returned 401; token was Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"))
                .post("/ops/quarantine/triage-1/notes?tenant=t-other").then().statusCode(200)
                .body("triage.notes[0].text", containsString("provider returned 401"))
                .body("triage.notes[0].text", not(containsString("eyJzdWIiOiJ4In0")));
        // Who acted is the token's subject, which the identity provider fixes, not a display name a user may edit: a token
        // whose upn and preferred_username say "olga" acts, and is audited, as its own subject.
        given().auth().oauth2(io.poisonguard.testing.Tokens.named("mallory", "olga", "operator")).contentType(ContentType.JSON)
                .body(Map.of("text", "looks like the provider")).post("/ops/quarantine/triage-1/notes?tenant=t-other").then().statusCode(200)
                .body("triage.notes[1].by", equalTo("mallory"));
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("assignee", "<script>", "reason", "x"))
                .post("/ops/quarantine/triage-1/assign?tenant=t-other").then().statusCode(400);
        // A reason is kept for ever in the audit trail and shown to every viewer of the tenant: a credential pasted into
        // one is masked as a note's is, while what an operator means by it (a ticket, a name) stays.
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("assignee", "Dana R.",
                        "reason", "INC-2041283: provider 401 with Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl password=hunter2hunter2"))
                .post("/ops/quarantine/triage-1/assign?tenant=t-other").then().statusCode(200);
        given().auth().oauth2(viewer).get("/ops/audit?jobId=triage-1").then().statusCode(200)
                .body("items.action", hasItem("ACKNOWLEDGE")).body("items.action", hasItem("ASSIGN")).body("items.action", hasItem("NOTE"))
                .body("items.reason", hasItem(containsString("INC-2041283: provider 401")))
                .body("items.reason", not(hasItem(containsString("eyJzdWIiOiJ4In0"))))
                .body("items.reason", not(hasItem(containsString("hunter2"))));
    }

    @Test
    void anOverdueRecordIsEscalatedOncePerStageToItsOwnersEscalationRoute() {
        JobKey key = new JobKey("t-permits", "overdue-1");
        quarantined(key);
        await().atMost(Duration.ofSeconds(20)).until(() -> count("/permits-escalations", "overdue-1", "acknowledged") == 1);
        await().atMost(Duration.ofSeconds(20)).until(() -> count("/permits-escalations", "overdue-1", "resolved") == 1);
        // Three more checks run: still one escalation per stage.
        long passes = escalation.passes();
        await().atMost(Duration.ofSeconds(15)).until(() -> escalation.passes() >= passes + 3);
        assertEquals(1, count("/permits-escalations", "overdue-1", "acknowledged"), TeamRoutes.at("/permits-escalations").toString());
        assertEquals(1, count("/permits-escalations", "overdue-1", "resolved"));
        QuarantineRecord r = quarantine.find(key).orElseThrow();
        assertEquals(java.util.Set.of("acknowledge", "resolve"), r.triage().escalated());
        String metrics = management().get("/q/metrics").then().extract().asString();
        assertTrue(metrics.contains("poison_guard_escalations_total{owner=\"permits\",stage=\"acknowledge\"}"), "escalations counted");
        assertTrue(metrics.contains("poison_guard_quarantine_overdue{owner=\"permits\",stage=\"resolve\"}"), "overdue gauge");
        given().auth().oauth2(viewer).get("/ops/audit?jobId=overdue-1").then().body("items.outcome", hasItem("ESCALATED_ACKNOWLEDGE"));
    }

    @Test
    void anOverdueRecordBehindFiveHundredOlderOnesAlreadyEscalatedIsStillEscalated() {
        // A broken producer left more than a check looks at per class: every older record has had both its escalations
        // and still waits. A check that reads the oldest 500 would never reach the new one.
        java.time.Instant now = java.time.Instant.now();
        for (int i = 0; i < io.poisonguard.triage.EscalationCheck.PER_CLASS; i++) {
            quarantine.putIfAbsent(timedOut("old-" + i, now.minus(Duration.ofDays(1)).plusMillis(i),
                    java.util.Set.of("acknowledge", "resolve")));
        }
        JobKey late = new JobKey("t-permits", "behind-the-500");
        quarantine.putIfAbsent(timedOut(late.jobId(), now.minus(Duration.ofHours(1)), java.util.Set.of()));

        await().atMost(Duration.ofSeconds(20)).until(() -> quarantine.find(late).orElseThrow().triage().escalated()
                .containsAll(java.util.Set.of("acknowledge", "resolve")));
        // The overdue gauge counts the escalated ones too: they are still past their deadline.
        java.util.regex.Pattern gauge = java.util.regex.Pattern.compile("poison_guard_quarantine_overdue\\{owner=\"permits\",stage=\"resolve\"} ([0-9.]+)");
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            java.util.regex.Matcher m = gauge.matcher(management().get("/q/metrics").asString());
            return m.find() && Double.parseDouble(m.group(1)) >= 501;
        });
    }

    private static io.poisonguard.quarantine.QuarantineRecord timedOut(String jobId, java.time.Instant at, java.util.Set<String> escalated) {
        return quarantined(jobId, FailureClass.TIMEOUT, "permits", at, escalated);
    }

    private static io.poisonguard.quarantine.QuarantineRecord quarantined(String jobId, FailureClass c, String owner, java.time.Instant at,
                                                                          java.util.Set<String> escalated) {
        return new io.poisonguard.quarantine.QuarantineRecord(jobId, "t-permits", "permit-report", 1, c,
                c + " limit reached", 3, Map.of(c, 3), new io.poisonguard.admission.Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), at, at, at, at.plus(Duration.ofDays(13)),
                "m-" + jobId, io.poisonguard.quarantine.QuarantineStatus.QUARANTINED, List.of(), null,
                io.poisonguard.quarantine.DeadLetterCopy.sent("d-" + jobId),
                new io.poisonguard.quarantine.Triage(owner, false, null, null, null, List.of(), escalated));
    }

    /**
     * Records escalated for acknowledgement whose resolve deadline is still far off (another owner's, an hour) have nothing
     * to escalate for that hour, yet a check read them as the oldest 500 of their class and never reached a newer record
     * of another owner, overdue for its acknowledgement: no escalation, and its acknowledge gauge stayed 0.
     */
    @Test
    void anOverdueRecordBehindFiveHundredOlderOnesWhoseNextStageIsNotDueIsStillEscalated() {
        java.time.Instant now = java.time.Instant.now();
        for (int i = 0; i < io.poisonguard.triage.EscalationCheck.PER_CLASS; i++) {
            quarantine.putIfAbsent(quarantined("partly-" + i, FailureClass.THROTTLED, "strays", now.minus(Duration.ofMinutes(10)).plusMillis(i),
                    java.util.Set.of("acknowledge")));
        }
        JobKey late = new JobKey("t-permits", "behind-the-partly-escalated");
        quarantine.putIfAbsent(quarantined(late.jobId(), FailureClass.THROTTLED, "permits", now.minus(Duration.ofMinutes(1)), java.util.Set.of()));

        await().atMost(Duration.ofSeconds(20)).until(() -> quarantine.find(late).orElseThrow().triage().escalated().contains("acknowledge"));
        // The gauge still counts the 500 partly escalated ones as overdue for acknowledgement.
        java.util.regex.Pattern gauge = java.util.regex.Pattern.compile("poison_guard_quarantine_overdue\\{owner=\"strays\",stage=\"acknowledge\"} ([0-9.]+)");
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            java.util.regex.Matcher m = gauge.matcher(management().get("/q/metrics").asString());
            return m.find() && Double.parseDouble(m.group(1)) >= io.poisonguard.triage.EscalationCheck.PER_CLASS;
        });
    }

    /**
     * Owners with different deadlines: 500 records of the default owner (acknowledge within 4 h), quarantined ten minutes
     * ago, are not due; a newer record of "permits" (within 3 s) is. A check read the 500 oldest records past the shortest
     * deadline of any owner, which were the default owner's, and never reached it until they fell due hours later.
     */
    @Test
    void anOverdueRecordBehindFiveHundredOlderOnesOfASlowerOwnerIsStillEscalated() {
        java.time.Instant now = java.time.Instant.now();
        for (int i = 0; i < io.poisonguard.triage.EscalationCheck.PER_CLASS; i++) {
            // An owner since removed from configuration has the default owner's deadlines: some of the 500 are such.
            String owner = i % 10 == 0 ? "a-team-since-removed" : "operations";
            quarantine.putIfAbsent(quarantined("slow-" + i, FailureClass.DEPENDENCY_DOWN, owner, now.minus(Duration.ofMinutes(10)).plusMillis(i),
                    java.util.Set.of()));
        }
        JobKey late = new JobKey("t-permits", "behind-a-slower-owner");
        quarantine.putIfAbsent(quarantined(late.jobId(), FailureClass.DEPENDENCY_DOWN, "permits", now.minus(Duration.ofMinutes(1)), java.util.Set.of()));

        await().atMost(Duration.ofSeconds(20)).until(() -> quarantine.find(late).orElseThrow().triage().escalated()
                .containsAll(java.util.Set.of("acknowledge", "resolve")));
        long passes = escalation.passes();
        await().atMost(Duration.ofSeconds(10)).until(() -> escalation.passes() > passes + 1);
        assertTrue(quarantine.find(new JobKey("t-permits", "slow-0")).orElseThrow().triage().escalated().isEmpty(),
                "the default owner's records are not due for hours");
        assertTrue(quarantine.find(new JobKey("t-permits", "slow-1")).orElseThrow().triage().escalated().isEmpty());
    }

    @Test
    void anOverdueRecordOfAJobThatNamedNoValidTenantIsEscalatedLikeAnyOther() {
        JobKey tenantless = new JobKey(null, "stray-1");
        Map<String, String> attributes = new HashMap<>(Queues.permitAttributes(tenantless.jobId(), "no valid tenant!", 1));
        attributes.put("job-type", "stray-report");
        queues().send(Queues.permitV1("P-stray-1"), attributes);
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(tenantless).isPresent());
        assertEquals("strays", quarantine.find(tenantless).orElseThrow().triage().owner());

        await().atMost(Duration.ofSeconds(20)).until(() -> quarantine.find(tenantless).orElseThrow().triage().escalated().contains("acknowledge"));
        given().auth().oauth2(viewer).get("/ops/audit?jobId=stray-1").then().statusCode(200)
                .body("items.outcome", hasItem("ESCALATED_ACKNOWLEDGE"));
    }

    private static long count(String route, String jobId, String word) {
        return TeamRoutes.at(route).stream().filter(a -> a.contains("\"jobId\":\"" + jobId + "\"") && a.contains("\"event\":\"job.escalated\"")
                && a.contains("not " + word)).count();
    }

    @Test
    void aDisposableJobTypesPoisonIsDroppedAndCountedBesideAKeptTypesWhichIsQuarantined() {
        int dlqBefore = queues().depth(names.deadLetterQueue());
        queues().send("illegal", ScriptedHandler.attributes("disposable-1"));
        JobKey dropped = new JobKey("tenant-s", "disposable-1");
        JobKey kept = new JobKey("t-other", "kept-1");
        quarantined(kept);
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(dropped).map(r -> r.state() == JobState.DROPPED).orElse(false));
        assertTrue(quarantine.find(dropped).isEmpty(), "no quarantine record for a dropped job");
        assertEquals(dlqBefore + 1, queues().depth(names.deadLetterQueue()), "only the kept type's copy reached the DLQ");
        String metrics = management().get("/q/metrics").then().extract().asString();
        assertTrue(metrics.contains("poison_guard_dropped_total{failure_class=\"PERMANENT\",job_type=\"scripted\"} 1.0"), "dropped and counted");
        // A second copy of the dropped job is deleted without running.
        queues().send("ok", ScriptedHandler.attributes("disposable-1"));
        await().atMost(Duration.ofSeconds(20)).until(() -> queues().depth(names.jobsQueue()) == 0);
        assertEquals(JobState.DROPPED, ledger.find(dropped).orElseThrow().state());
        assertEquals(1, ledger.find(dropped).orElseThrow().attempt(), "the copy did not run");
    }

    @Test
    void aCopyOfAJobResolvedBeforeItsTypeBecameDisposableIsDeletedNotCycled() {
        // Quarantined and resolved by an operator while its type was kept; the type has since been made disposable, and a
        // copy of the job turns up (a producer's resend, a copy moved back from the DLQ).
        java.time.Instant now = java.time.Instant.now();
        JobKey resolved = new JobKey("tenant-s", "resolved-then-disposable");
        ledger.write(io.poisonguard.ledger.LedgerRecord.fresh(resolved.jobId(), "tenant-s", "scripted", 1, now)
                .moveTo(JobState.QUARANTINED, now).withQuarantine(io.poisonguard.failure.FailureClass.PERMANENT, "boom")
                .moveTo(JobState.RESOLVED, now));
        int dlqBefore = queues().depth(names.deadLetterQueue());
        queues().send("ok", ScriptedHandler.attributes(resolved.jobId()));

        // Nothing to keep (the job was resolved, its type is disposable) and nothing to record: the copy is deleted.
        await().atMost(Duration.ofSeconds(20)).until(() -> queues().depth(names.jobsQueue()) == 0);
        assertEquals(JobState.RESOLVED, ledger.find(resolved).orElseThrow().state());
        assertEquals(dlqBefore, queues().depth(names.deadLetterQueue()), "no dead-letter copy for it");
    }

    @Test
    void aCopyOfADisposableTypesJobThatHasAQuarantineRecordIsForwardedToTheDlqNotDropped() {
        // The dead-letter intake adopted the job (it quarantines orphans of every type), or it was quarantined before its type
        // became disposable: it has a record, which escalates and can be resolved or replayed. A copy that turns up then
        // moved the ledger to DROPPED under that record, leaving one that could be neither resolved nor replayed.
        java.time.Instant now = java.time.Instant.now();
        JobKey adopted = new JobKey("tenant-s", "adopted-disposable");
        io.poisonguard.ledger.LedgerRecord parked = ledger.write(io.poisonguard.ledger.LedgerRecord.fresh(adopted.jobId(), "tenant-s",
                "scripted", 1, now).moveTo(JobState.QUARANTINED, now).withQuarantine(io.poisonguard.failure.FailureClass.REDRIVEN, "redriven"));
        assertTrue(quarantine.putIfAbsent(io.poisonguard.quarantine.QuarantineRecord.of(parked,
                new io.poisonguard.admission.Diagnostics(2, "UTF-8", null, null, 1, null), "m-adopted", now, Duration.ofDays(14),
                java.util.List.of(), io.poisonguard.quarantine.DeadLetterCopy.sent("d-adopted"),
                io.poisonguard.quarantine.Triage.owned("operations", true))));
        int dlqBefore = queues().depth(names.deadLetterQueue());
        queues().send("ok", ScriptedHandler.attributes(adopted.jobId()));

        await().atMost(Duration.ofSeconds(20)).until(() -> queues().depth(names.jobsQueue()) == 0
                && queues().depth(names.deadLetterQueue()) == dlqBefore + 1);
        assertEquals(JobState.QUARANTINED, ledger.find(adopted).orElseThrow().state(), "still quarantined: its record can be acted on");
    }

    @Test
    void aNoteIsBoundedInBytesSoAHundredNotesFitADynamoDbItem() {
        // 100 notes of 2,000 three-byte characters would be 600 KB on one record: past DynamoDB's 400 KB item, every later
        // write to the record (escalation, acknowledge, replay) would be refused. A note is bounded in UTF-8 bytes.
        JobKey key = new JobKey("t-other", "wide-notes");
        // Refused at admission (an unknown schema version), so it adds no failure to the systemic guard's same-signature row.
        queues().send(Queues.permitV3("P-wide"), Queues.permitAttributes(key.jobId(), key.tenant(), 42));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key).isPresent());
        String wide = "\u6f22".repeat(TriageActions.NOTE_BYTES / 3 + 1);
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("text", wide))
                .post("/ops/quarantine/wide-notes/notes?tenant=t-other").then().statusCode(400)
                .body("detail", containsString(TriageActions.NOTE_BYTES + " bytes"));
        String fits = "\u6f22".repeat(TriageActions.NOTE_BYTES / 3);
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("text", fits))
                .post("/ops/quarantine/wide-notes/notes?tenant=t-other").then().statusCode(200);
        String kept = quarantine.find(key).orElseThrow().triage().notes().get(0).text();
        assertTrue(kept.getBytes(StandardCharsets.UTF_8).length <= TriageActions.NOTE_BYTES, kept.length() + " chars kept");
        assertTrue(TriageActions.NOTE_BYTES * io.poisonguard.quarantine.Triage.MAX_NOTES <= 250_000,
                "a record's notes stay well under DynamoDB's 400 KB item");
    }
}

package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.example.permit.SimulatedRecordsProvider;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.pipeline.ConsumptionGate;
import io.poisonguard.testing.AlertSinks;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;

import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 9, a bad deploy: the provider client fails every call with the same IllegalArgumentException
 * (which the built-in rules call PERMANENT, limit 1). Before the guard, every job in the backlog was
 * quarantined within a minute. Now a handful are, the guard trips, consumption stops with one
 * systemic alert, and once the fix is out a probe succeeds and everything completes.
 */
@QuarkusTest
@TestProfile(SystemicFailureTest.Profile.class)
class SystemicFailureTest extends FlowTest {
    /** 200 in the suite; scripts or a reader may run the 2,000 of issue 9 with -Dsystemic.jobs=2000. */
    static final int JOBS = Integer.getInteger("systemic.jobs", 200);

    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(AlertSinks.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            // Long enough that the command-line resume below lands before a probe would resume on its own.
            return Map.of("poison-guard.systemic.probe-interval", "6s",
                    "poison-guard.example.provider.rate", "1000");
        }
    }

    @Inject
    SimulatedRecordsProvider provider;
    @Inject
    ConsumptionGate gate;
    @Inject
    ObjectMapper json;
    @TestHTTPResource("/")
    URL url;

    @Test
    void aBadDeployQuarantinesAHandfulStopsWithOneSystemicAlertAndEverythingCompletesAfterTheFix() throws Exception {
        AlertSinks.WEBHOOK.clear();
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, "illegal-argument");
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, JOBS).mapToObj(i -> "deploy-" + i).toList();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-d", 3)));

        await().atMost(Duration.ofSeconds(30)).until(() -> gate.admit() != ConsumptionGate.Admit.OPEN);
        // While the fault lasts, probes fail and are held: nothing more is quarantined.
        int callsAtTrip = provider.totalCalls();
        await().atMost(Duration.ofSeconds(30)).until(() -> provider.totalCalls() >= callsAtTrip + 2);
        long quarantined = jobs.stream().filter(id -> quarantine.find(key(id)).isPresent()).count();
        assertTrue(quarantined <= 4, "at most same-signature - 1 jobs were charged before the guard tripped, was " + quarantined);
        assertTrue(provider.totalCalls() < JOBS / 4, "consumption stopped: " + provider.totalCalls() + " calls for " + JOBS + " jobs");

        String viewer = Tokens.of("vera", "viewer");
        given().auth().oauth2(viewer).get("/ops/consumption").then().statusCode(200)
                .body("trip.signature", equalTo("PERMANENT IllegalArgumentException at SimulatedRecordsProvider.standing"));
        List<JsonNode> systemic = systemicAlerts();
        assertEquals(1, systemic.size(), "one systemic alert, not one per job: " + AlertSinks.WEBHOOK);
        assertTrue(systemic.get(0).get("reason").asText().contains("deploy-"), "the alert names sample jobs");
        assertTrue(AlertSinks.WEBHOOK.stream().filter(a -> a.contains("job.quarantined")).count() <= 4, "no alert storm");

        // The fix is deployed: the next probe succeeds and consumption resumes on its own.
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);
        await().atMost(Duration.ofSeconds(90)).until(() -> jobs.stream()
                .allMatch(id -> state(id) == JobState.SUCCEEDED || quarantine.find(key(id)).isPresent()));
        long completed = jobs.stream().filter(id -> state(id) == JobState.SUCCEEDED).count();
        assertEquals(JOBS - quarantined, completed, "every job not charged before the trip completed");
        assertEquals(ConsumptionGate.Admit.OPEN, gate.admit());
        long held = jobs.stream().filter(id -> ledger.find(key(id)).orElseThrow().history().stream()
                .anyMatch(e -> e.outcome() == AttemptOutcome.HELD)).count();
        assertTrue(held >= 1, "the failures after the trip were held, not charged");
        assertTrue(jobs.stream().filter(id -> state(id) == JobState.SUCCEEDED)
                .allMatch(id -> ledger.find(key(id)).orElseThrow().failures().isEmpty()), "no completed job was charged a failure");
        await().atMost(Duration.ofSeconds(5)).until(() -> AlertSinks.WEBHOOK.stream().anyMatch(a -> a.contains("system.resumed")));
        System.out.printf("%n[bad deploy] %d jobs, every call failing alike: %d quarantined before the guard tripped, %d held,"
                + " %d systemic alert, %d completed after the fix%n", JOBS, quarantined, held, systemic.size(), completed);
    }

    /**
     * A bad deploy breaks one handler of several. The permit reports fail alike while the other type's jobs, interleaved
     * with them, succeed. Each success used to break the reports' row, so the guard tripped only on the quarantine rate,
     * after more than {@code systemic.max-quarantines} reports had been quarantined. A row is now per job type.
     */
    @Test
    void aBadDeployOfOneHandlerAmongHealthyOnesStillTripsTheGuardAfterAHandful() {
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, "illegal-argument");
        try {
            Queues queues = new Queues(sqs, names);
            List<String> reports = new ArrayList<>();
            List<String> others = new ArrayList<>();
            // One report in five; with the other jobs succeeding, five reports in a row would be rare.
            for (int i = 0; i < 40; i++) {
                String report = "mixed-report-" + i;
                reports.add(report);
                queues.send(Queues.permitV3("P-" + report), Queues.permitAttributes(report, "tenant-d", 3));
                for (int j = 0; j < 4; j++) {
                    String other = "mixed-ok-" + i + "-" + j;
                    others.add(other);
                    queues.send("ok", io.poisonguard.testing.ScriptedHandler.attributes(other));
                }
            }

            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> systemicGuard.trip().isPresent());
            io.poisonguard.systemic.SystemicWatch.Trip trip = systemicGuard.trip().orElseThrow();
            // Fixed at once, long before the first probe: what is quarantined after this was charged before the trip.
            provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);
            assertEquals("PERMANENT IllegalArgumentException at SimulatedRecordsProvider.standing",
                    trip.signature() == null ? "(the quarantine rate: " + trip.cause() + ")" : trip.signature().describe(),
                    "the reports' row tripped the guard");

            await().atMost(Duration.ofSeconds(90)).until(() -> reports.stream()
                    .allMatch(id -> state(id) == JobState.SUCCEEDED || quarantine.find(key(id)).isPresent())
                    && others.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
            long quarantined = reports.stream().filter(id -> quarantine.find(key(id)).isPresent()).count();
            assertTrue(quarantined <= 4, "at most same-signature - 1 reports were charged before the trip, was " + quarantined);
            assertEquals(ConsumptionGate.Admit.OPEN, gate.admit());
            System.out.printf("%n[one bad handler of two] %d reports failing alike among %d healthy jobs: %d quarantined, trip: %s%n",
                    reports.size(), others.size(), quarantined, trip.cause());
        } finally {
            provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);
            systemicGuard.resume("SystemicFailureTest");
        }
    }

    @Test
    void anOperatorResumesConsumptionFromTheCommandLineWithAReasonAndAViewerCannot() throws Exception {
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, "illegal-argument");
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, 12).mapToObj(i -> "op-" + i).toList();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-d", 3)));
        await().atMost(Duration.ofSeconds(30)).until(() -> gate.admit() != ConsumptionGate.Admit.OPEN);
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);

        String viewer = Tokens.of("vera", "viewer");
        String operator = Tokens.of("olga", "operator");
        Run status = command("--token", viewer);
        assertEquals(0, status.exit(), status.out());
        assertTrue(status.out().contains("systemic guard: PAUSED") || status.out().contains("systemic guard: PROBE"), status.out());
        assertTrue(status.out().contains("signature: PERMANENT IllegalArgumentException at SimulatedRecordsProvider.standing"), status.out());
        Run noReason = command("--token", operator, "--resume");
        assertEquals(2, noReason.exit(), noReason.out());
        Run refused = command("--token", viewer, "--resume", "--reason", "fixed");
        assertEquals(1, refused.exit(), refused.out());
        assertTrue(refused.out().contains("403"), refused.out());
        Run resumed = command("--token", operator, "--resume", "--reason", "config fixed in v2.3.1");
        assertEquals(0, resumed.exit(), resumed.out());
        assertTrue(resumed.out().contains("resumed"), resumed.out());
        assertTrue(resumed.out().contains("other workers: every other worker whose guard tripped before this resume reads it"),
                resumed.out());

        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream()
                .allMatch(id -> state(id) == JobState.SUCCEEDED || quarantine.find(key(id)).isPresent()));
        given().auth().oauth2(viewer).get("/ops/audit?jobId=system:consumption").then().statusCode(200)
                .body("items[-1].action", equalTo("RESUME_CONSUMPTION")).body("items[-1].reason", equalTo("config fixed in v2.3.1"))
                .body("items[-1].outcome", equalTo("RESUMED"));
        System.out.println("\n[consumption command] " + status.out().strip().replace("\n", " | "));
    }

    /**
     * Resuming clears the guard, then audits it. When the audit table does not take the entry, the guard is already
     * cleared: the answer says consumption resumed (and that the entry was not written), as a replay that went out does;
     * before, it answered 503, the command exited 1, and a retry answered "not tripped" with no entry at all.
     */
    @Test
    void aResumeWhoseAuditEntryIsNotWrittenStillAnswersThatItResumed() {
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, "illegal-argument");
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, 12).mapToObj(i -> "audit-down-" + i).toList();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-d", 3)));
        await().atMost(Duration.ofSeconds(30)).until(() -> gate.admit() != ConsumptionGate.Admit.OPEN);
        // The fault stays until the resume has answered, so no probe resumes on its own first.
        io.poisonguard.audit.AuditLog real = io.quarkus.arc.ClientProxy.unwrap(audit);
        io.quarkus.test.junit.QuarkusMock.installMockForType((io.poisonguard.audit.AuditLog) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[]{io.poisonguard.audit.AuditLog.class}, (proxy, method, args) -> {
                    if (method.getName().equals("append")) {
                        throw new io.poisonguard.ledger.StoreUnavailable("the audit trail", false,
                                new java.net.SocketTimeoutException("read timed out"));
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                }), io.poisonguard.audit.AuditLog.class);

        given().auth().oauth2(Tokens.of("olga", "operator")).contentType(io.restassured.http.ContentType.JSON)
                .body(Map.of("reason", "provider fixed")).post("/ops/consumption/resume").then().statusCode(200)
                .body("resumed", equalTo(true)).body("audited", equalTo(false))
                .body("otherWorkers", org.hamcrest.Matchers.startsWith("may not have been told"));
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream()
                .allMatch(id -> state(id) == JobState.SUCCEEDED || quarantine.find(key(id)).isPresent()));
    }

    /**
     * Workers behind one address: an operator's resume reaches one of them, which clears its own guard and writes the
     * audit entry. Every other worker whose guard tripped before that entry reads it and resumes too; before, each
     * stayed stopped until a probe of its own succeeded, and an operator could not reach it through the shared address.
     */
    @Test
    void aResumeAnsweredByAnotherWorkerClearsThisWorkersGuard() {
        AlertSinks.WEBHOOK.clear();
        List<String> jobs = tripTheGuard("fleet-");
        // The fault stays, so this worker's probes fail: only the other worker's resume can clear its guard.
        audit.append(new io.poisonguard.audit.AuditEntry("system:consumption", null, java.time.Instant.now(), "oscar",
                io.poisonguard.audit.AuditAction.RESUME_CONSUMPTION, "provider fixed", "other-worker", null, null, "RESUMED", null));

        await().atMost(Duration.ofSeconds(20)).until(() -> AlertSinks.WEBHOOK.stream()
                .anyMatch(a -> a.contains("system.resumed") && a.contains("oscar")));
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream()
                .allMatch(id -> state(id) == JobState.SUCCEEDED || quarantine.find(key(id)).isPresent()));
    }

    /**
     * Workers behind one address: GET /ops/consumption was answered by one of them with its own guard only, so an operator at
     * 3 a.m. could not tell which workers had stopped. Each worker now posts its guard on the fleet's board; the answer lists
     * every worker tripped since the last resume (to a token of every tenant; others get the count).
     */
    @Test
    void theConsumptionStateListsEveryWorkerWhoseGuardIsTrippedUntilAResume() {
        List<String> jobs = tripTheGuard("seen-");
        // Another worker behind the same address posted its own trip.
        board.tripped("worker-b", java.time.Instant.now(), "5 jobs failed alike", java.time.Instant.now());

        await().atMost(Duration.ofSeconds(20)).until(() -> trippedWorkers().containsAll(List.of(workerId, "worker-b")));
        // A token of one tenant learns how many workers stopped, not which or why (their causes are every tenant's).
        given().auth().oauth2(Tokens.scoped("vera", List.of("tenant-d"), "viewer")).get("/ops/consumption").then().statusCode(200)
                .body("fleet.trippedCount", org.hamcrest.Matchers.greaterThanOrEqualTo(2))
                .body("fleet.trippedWorkers", org.hamcrest.Matchers.nullValue());
        // The fix first, then the resume: jobs still failing after it would trip this worker again, and post a new trip.
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, null);
        given().auth().oauth2(operator).contentType(io.restassured.http.ContentType.JSON)
                .body(Map.of("reason", "provider fixed")).post("/ops/consumption/resume").then().statusCode(200);

        await().atMost(Duration.ofSeconds(20)).until(() -> trippedWorkers().isEmpty());
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream()
                .allMatch(id -> state(id) == JobState.SUCCEEDED || quarantine.find(key(id)).isPresent()));
    }

    /** Every permit job fails alike from now on; 12 are sent, and this worker's guard trips on them. */
    private List<String> tripTheGuard(String prefix) {
        provider.script(SimulatedRecordsProvider.EVERY_PERMIT, "illegal-argument");
        Queues queues = new Queues(sqs, names);
        List<String> jobs = IntStream.range(0, 12).mapToObj(i -> prefix + i).toList();
        jobs.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-d", 3)));
        await().atMost(Duration.ofSeconds(30)).until(() -> gate.admit() != ConsumptionGate.Admit.OPEN);
        return jobs;
    }

    private List<String> trippedWorkers() {
        return given().auth().oauth2(operator).get("/ops/consumption").then().statusCode(200).extract().path("fleet.trippedWorkers.worker");
    }

    @Inject
    @jakarta.inject.Named("worker-id")
    String workerId;
    @Inject
    io.poisonguard.systemic.GuardBoard board;
    final String operator = Tokens.of("olga", "operator");

    @Inject
    io.poisonguard.audit.AuditLog audit;
    @Inject
    io.poisonguard.pipeline.SystemicGuard systemicGuard;

    record Run(int exit, String out) {
    }

    private Run command(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("node", "scripts/consumption.mjs", "--url", url.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the command finished");
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private List<JsonNode> systemicAlerts() throws Exception {
        List<JsonNode> out = new java.util.ArrayList<>();
        for (String a : AlertSinks.WEBHOOK) {
            JsonNode n = json.readTree(a);
            if ("system.failure-suspected".equals(n.get("event").asText())) {
                out.add(n);
            }
        }
        return out;
    }
}

package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.pipeline.Poller;
import io.poisonguard.sqs.QueueUrls;
import io.poisonguard.sqs.SqsPayloadArchive;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.replay.ArchivedMessage;
import io.poisonguard.replay.PayloadArchive;
import io.poisonguard.vault.KeptPayload;
import io.poisonguard.vault.PayloadVault;
import io.poisonguard.dynamodb.DynamoAuditLog;
import io.poisonguard.dynamodb.DynamoQuarantineStore;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusMock;
import io.poisonguard.replay.BulkReplay;
import io.poisonguard.replay.BulkReplayStore;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Invariant 10, seed 001's failure trace: quarantine, ship the reader, replay with the same
 * identity under guard, audit, canary-first bulk replay at a bounded rate.
 */
@QuarkusTest
@TestProfile(ReplayFlowTest.Profile.class)
class ReplayFlowTest extends FlowTest {
    static final double RATE = 4.0;

    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // These flows quarantine many release-27 jobs in a row on purpose; in production such a row
            // (nothing succeeding between them) is what the systemic guard stops on, so it is widened here.
            return Map.of("poison-guard.replay.rate", Double.toString(RATE),
                    "poison-guard.replay.canary-timeout", "30s",
                    "poison-guard.replay.settle-time", "1s",
                    "poison-guard.systemic.same-signature", "100",
                    "poison-guard.systemic.max-quarantines", "1000");
        }
    }

    @Inject
    AuditLog audit;
    @Inject
    PermitReportHandler handler;
    @Inject
    Poller poller;
    @Inject
    PayloadArchive archive;
    @Inject
    PayloadVault vault;
    @Inject
    QueueUrls urls;
    @Inject
    BulkReplayStore bulkStore;

    Queues queues;
    final String operator = Tokens.of("olga", "operator");
    final String viewer = Tokens.of("vic", "viewer");
    final String admin = Tokens.of("ada", "admin");

    @BeforeEach
    void setUp() {
        queues = new Queues(sqs, names);
        handler.legacyReader(false);
    }

    @AfterEach
    void tearDown() {
        handler.legacyReader(false);
        poller.start();
    }

    private void tenant(String tenant, String status, String... jobTypes) {
        registerTenant(tenant, status, jobTypes);
    }

    /** Sends a release-27 job and waits until its quarantine is complete (DLQ copy sent, source deleted). */
    private void quarantineOldSchemaJob(String jobId, String tenant) {
        queues.send(Queues.permitV1("P-" + jobId), Queues.permitAttributes(jobId, tenant, 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> state(jobId) == JobState.QUARANTINED && quarantine.find(key(jobId)).isPresent()
                && queues.depth(names.jobsQueue()) == 0);
    }

    private Response replay(String token, String jobId, String reason) {
        return given().auth().oauth2(token).contentType(ContentType.JSON).body(Map.of("reason", reason, "dryRun", false))
                .post("/ops/quarantine/" + jobId + "/replay");
    }


    /** The job's newest REPLAY audit entry. */
    private AuditEntry replayAudited(String jobId) {
        return audited(jobId, AuditAction.REPLAY);
    }

    /** The first {@code action} audited for {@code jobId}. */
    private AuditEntry audited(String jobId, AuditAction action) {
        return audit.forJob(jobId, 10).stream().filter(e -> e.action() == action).findFirst()
                .orElseThrow(() -> new AssertionError("no " + action + " of " + jobId + " is audited"));
    }

    private List<Message> noticesFor(String jobId) {
        return queues.drain(names.noticesQueue()).stream().filter(m -> jobId.equals(Queues.attr(m, "job-id"))).toList();
    }

    @Test
    void anUnsupportedSchemaJobReplaysAfterTheReaderShipsWithItsIdentityAndExactlyOneNotice() {
        tenant("t-drill", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-legacy", "t-drill");
        assertEquals(1, ledger.find(key("r-legacy")).orElseThrow().generation());

        handler.legacyReader(true);
        replay(operator, "r-legacy", "reader for release-27 shape shipped in 0.1.1")
                .then().statusCode(202).body("outcome", equalTo("REPLAYED")).body("generation", equalTo(2)).body("attempt", equalTo(2));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-legacy") == JobState.SUCCEEDED);

        LedgerRecord done = ledger.find(key("r-legacy")).orElseThrow();
        assertEquals(2, done.generation(), "a new generation");
        assertEquals(2, done.attempt(), "attempt numbering carries on");
        assertEquals(1, noticesFor("r-legacy").size(), "one completion notice");
        await().atMost(Duration.ofSeconds(10)).until(() -> quarantine.find(key("r-legacy")).orElseThrow().status() == QuarantineStatus.REPLAYED);
        QuarantineRecord record = quarantine.find(key("r-legacy")).orElseThrow();
        assertEquals("SUCCEEDED", record.replays().get(0).outcome());
        assertEquals("olga", record.replays().get(0).actor());

        AuditEntry entry = audit.forJob("r-legacy", 10).stream().filter(e -> e.outcome().equals("REPLAYED")).findFirst().orElseThrow();
        assertEquals("olga", entry.actor());
        assertEquals("reader for release-27 shape shipped in 0.1.1", entry.reason());
        assertEquals(2, entry.generation());
        assertEquals(2, entry.attempt());
        assertTrue(entry.codeVersion().startsWith("0.1.0-SNAPSHOT+"), entry.codeVersion());

        replay(operator, "r-legacy", "again").then().statusCode(409).contentType("application/problem+json")
                .body("title", equalTo("NOT_QUARANTINED")).body("jobId", equalTo("r-legacy"));
        // A stray copy of the replayed generation is dropped as a duplicate: still no second notice.
        Map<String, String> attrs = Queues.permitAttributes("r-legacy", "t-drill", 1);
        attrs.put("generation", "2");
        queues.send(Queues.permitV1("P-r-legacy"), attrs);
        await().atMost(Duration.ofSeconds(20)).until(() -> queues.depth(names.jobsQueue()) == 0);
        assertEquals(0, noticesFor("r-legacy").size(), "no second completion notice");
        System.out.printf("%n[replay] r-legacy: quarantined at generation 1, replayed by olga as generation 2 attempt 2, SUCCEEDED,"
                + " one notice; second replay answered 409; audit codeVersion %s%n", entry.codeVersion());
    }

    /**
     * SQS takes at most 10 message attributes. The vault keeps all of a job's own; a replay adds the job id and the
     * generation to them, so a job sent with 9 or 10 could never be replayed (every try answered 503 SEND_FAILED).
     */
    @Test
    void aJobSentWithTenAttributesReplaysWithTheJobIdTheGenerationAndTheContractsFirst() {
        tenant("t-wide", "ACTIVE", "permit-report");
        Map<String, String> attrs = Queues.permitAttributes("r-wide", "t-wide", 1);
        IntStream.rangeClosed(1, 6).forEach(i -> attrs.put("x-" + i, "extra " + i));
        queues.send(Queues.permitV1("P-r-wide"), attrs);
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-wide") == JobState.QUARANTINED
                && quarantine.find(key("r-wide")).isPresent() && queues.depth(names.jobsQueue()) == 0);
        assertEquals(10, vault.find(key("r-wide")).orElseThrow().attributes().size(), "the vault keeps every attribute the job came with");
        handler.legacyReader(true);
        poller.stop();

        replay(operator, "r-wide", "reader shipped").then().statusCode(202).body("outcome", equalTo("REPLAYED"))
                .body("generation", equalTo(2));
        // Looked at without taking it: visible again at once for the worker.
        Message copy = sqs.receiveMessage(b -> b.queueUrl(queues.url(names.jobsQueue())).waitTimeSeconds(5).visibilityTimeout(0)
                .messageAttributeNames("All")).messages().stream().findFirst().orElseThrow(() -> new AssertionError("no replayed copy"));
        assertEquals(java.util.Set.of("job-id", "generation", "tenant", "job-type", "schema-version", "x-1", "x-2", "x-3", "x-4", "x-5"),
                copy.messageAttributes().keySet(), "the job id and generation, the contract's, then the producer's by name, up to 10");
        assertEquals("2", Queues.attr(copy, "generation"));
        assertEquals("r-wide", Queues.attr(copy, "job-id"));
        poller.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-wide") == JobState.SUCCEEDED);
    }

    /**
     * A quarantined job's kept payload is the one its record describes. A later copy under the same tenant and job id
     * (a producer's resend, a dead-letter copy moved back by hand, or a sender forging the id) goes to the DLQ as one of
     * its copies and replaces nothing: before, it overwrote the vault's entry, so the payload view showed its body, a
     * replay sent it, and the replay's clean-up deleted the original's dead-letter copies.
     */
    @Test
    void aLaterCopyOfAQuarantinedJobDoesNotReplaceItsKeptPayload() {
        tenant("t-kept", "ACTIVE", "permit-report");
        Map<String, String> attrs = Queues.permitAttributes("r-kept", "t-kept", 1);
        attrs.put("x-origin", "producer");
        queues.send(Queues.permitV1("P-r-kept"), attrs);
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-kept") == JobState.QUARANTINED
                && quarantine.find(key("r-kept")).isPresent() && queues.depth(names.jobsQueue()) == 0);
        int copiesBefore = deadLetterCopies("r-kept");

        queues.send(Queues.permitV1("P-FORGED"), Queues.permitAttributes("r-kept", "t-kept", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0
                && deadLetterCopies("r-kept") > copiesBefore);

        var kept = vault.find(key("r-kept")).orElseThrow();
        assertEquals(Queues.permitV1("P-r-kept"), kept.body(), "the vault still holds the payload the job was quarantined with");
        assertEquals("producer", kept.attributes().get("x-origin").stringValue(), "and all of its attributes");
        assertEquals(JobState.QUARANTINED, state("r-kept"));
    }

    /**
     * An operator resolved the job: it must never run, its payload and dead-letter copies were discarded. A copy of it
     * that reaches the main queue afterwards is deleted, as the dead-letter intake deletes one; before, it was quarantined
     * again as a parked job's copy, its payload kept in the vault again and a new dead-letter copy sent.
     */
    @Test
    void aCopyOfAResolvedJobIsDeletedAndNothingOfItIsKeptAgain() {
        tenant("t-resolved", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-resolved", "t-resolved");
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("reason", "customer withdrew the permit"))
                .post("/ops/quarantine/r-resolved/resolve").then().statusCode(200).body("outcome", equalTo("RESOLVED"));
        await().atMost(Duration.ofSeconds(30)).until(() -> vault.find(key("r-resolved")).isEmpty() && deadLetterCopies("r-resolved") == 0);
        double handled = handledCopies();

        queues.send(Queues.permitV1("P-r-resolved"), Queues.permitAttributes("r-resolved", "t-resolved", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0 && handledCopies() > handled);

        assertTrue(vault.find(key("r-resolved")).isEmpty(), "the resolved job's payload was kept again");
        assertEquals(0, deadLetterCopies("r-resolved"), "a resolved job's copy was sent to the dead-letter queue again");
        assertEquals(JobState.RESOLVED, state("r-resolved"));
        given().auth().oauth2(Tokens.of("pat", "payload-reader")).get("/ops/quarantine/r-resolved/payload?reason=check")
                .then().statusCode(org.hamcrest.Matchers.not(200));
    }

    /** How many dead-letter copies of the job a scan finds; they are released again at once. */
    private int deadLetterCopies(String jobId) {
        var scan = archive.find(key(jobId));
        archive.release(scan.copies());
        return scan.copies().size();
    }

    /** Copies the workers have finished with, whatever the outcome (the pipeline's outcome counter). */
    private double handledCopies() {
        return management().get("/q/metrics").then()
                .extract().asString().lines().filter(l -> l.startsWith("poison_guard_outcomes_total"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    /**
     * The ledger item of a quarantined job never expires; its quarantine record does (or its write is still pending). The
     * ledger decides a resolve: with the record gone it still resolves the job, answers so and is audited.
     */
    @Test
    void aResolveWhoseQuarantineRecordIsGoneResolvesTheJobAnswers200AndIsAudited() {
        tenant("t-no-record", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-no-record", "t-no-record");
        JobKey job = key("r-no-record");
        dynamo.deleteItem(b -> b.tableName(names.quarantineTable()).key(Map.of("jobId", AttributeValue.fromS(job.storage()))));
        assertTrue(quarantine.find(job).isEmpty(), "the record is gone, as after its TTL");

        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("reason", "customer withdrew the permit"))
                .post("/ops/quarantine/r-no-record/resolve?tenant=t-no-record").then().statusCode(200)
                .body("outcome", equalTo("RESOLVED"));
        assertEquals(JobState.RESOLVED, state("r-no-record"));
        AuditEntry resolved = audited("r-no-record", AuditAction.RESOLVE);
        assertEquals("RESOLVED", resolved.outcome());
        assertEquals("olga", resolved.actor());
        assertEquals("customer withdrew the permit", resolved.reason());
    }

    /**
     * A resolve whose ledger write landed but whose answer was lost (a timeout: 503), or whose worker stopped right after it,
     * left the job RESOLVED with its kept payload, its dead-letter copy and its record still QUARANTINED; every resolve
     * after it answered 409 "only QUARANTINED jobs can be resolved", so an operator could never finish it. A resolve of a
     * resolved job now finishes that clean-up and answers 200.
     */
    @Test
    void aResolveOfAJobResolvedBeforeItsCleanUpFinishesTheCleanUp() {
        tenant("t-half", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-half", "t-half");
        JobKey job = key("r-half");
        assertTrue(vault.find(job).isPresent(), "the payload is kept");
        // The first resolve's ledger write, and nothing after it.
        ledger.write(ledger.findOwn(job).orElseThrow().moveTo(JobState.RESOLVED, java.time.Instant.now()));

        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("reason", "customer withdrew the permit, again"))
                .post("/ops/quarantine/r-half/resolve?tenant=t-half").then().statusCode(200).body("outcome", equalTo("RESOLVED"));

        assertTrue(vault.find(job).isEmpty(), "the kept payload is discarded");
        assertEquals(QuarantineStatus.RESOLVED, quarantine.find(job).orElseThrow().status());
        assertEquals("RESOLVED", audited("r-half", AuditAction.RESOLVE).outcome());
    }

    @Test
    void aReplayThatDiedBeforeItsCopyWasSentCanBeReissuedOnceItIsStale() {
        tenant("t-stuck", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-stuck", "t-stuck");
        handler.legacyReader(true);
        // What a replay that crashed right after its ledger write leaves: REPLAYING, copy still in the DLQ.
        ledger.write(ledger.find(key("r-stuck")).orElseThrow().replayed(Instant.now()));
        replay(operator, "r-stuck", "too early").then().statusCode(409).body("detail", containsString("settle time"));

        await().atMost(Duration.ofSeconds(10)).until(() -> ledger.find(key("r-stuck")).orElseThrow().updatedAt()
                .isBefore(Instant.now().minusSeconds(2)));
        replay(operator, "r-stuck", "re-issue the interrupted replay").then().statusCode(202)
                .body("generation", equalTo(3)).body("attempt", equalTo(2));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-stuck") == JobState.SUCCEEDED);
        assertEquals(3, ledger.find(key("r-stuck")).orElseThrow().generation());
        assertEquals(1, noticesFor("r-stuck").size(), "one notice");
    }

    @Test
    void aReplayWhoseVaultReadFailsPutsTheJobBackAnswers503AndIsAudited() {
        tenant("t-outage", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-outage", "t-outage");
        JobKey job = key("r-outage");
        AtomicBoolean vaultDown = new AtomicBoolean(true);
        QuarkusMock.installMockForType(vaultWhoseFindFails(job, vaultDown), PayloadVault.class);

        replay(operator, "r-outage", "vault outage drill").then().statusCode(503).contentType("application/problem+json")
                .body("title", equalTo("UNAVAILABLE")).body("detail", containsString("the payload vault did not answer"));
        LedgerRecord after = ledger.find(job).orElseThrow();
        assertEquals(JobState.QUARANTINED, after.state(), "put back, not left REPLAYING");
        assertEquals(1, after.generation(), "at the generation it was quarantined at");
        assertEquals(QuarantineStatus.QUARANTINED, quarantine.find(job).orElseThrow().status());
        AuditEntry failed = replayAudited("r-outage");
        assertEquals("REFUSED_UNAVAILABLE", failed.outcome());
        assertEquals("vault outage drill", failed.reason());
        assertTrue(failed.detail().contains("the payload vault did not answer"), failed.detail());

        // Once the vault answers, the same job replays at once: nothing waits for the settle time.
        vaultDown.set(false);
        handler.legacyReader(true);
        replay(operator, "r-outage", "vault is back").then().statusCode(202).body("generation", equalTo(2));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-outage") == JobState.SUCCEEDED);
    }

    @Test
    void aReissuedReplayWhoseVaultReadFailsAnswers503IsAuditedAndCanBeReissuedOnceTheVaultAnswers() {
        tenant("t-stuck-outage", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-stuck-outage", "t-stuck-outage");
        JobKey job = key("r-stuck-outage");
        // What a replay that crashed right after its ledger write leaves: REPLAYING, the payload still kept.
        ledger.write(ledger.find(job).orElseThrow().replayed(Instant.now()));
        await().atMost(Duration.ofSeconds(10)).until(() -> ledger.find(job).orElseThrow().updatedAt()
                .isBefore(Instant.now().minusSeconds(2)));
        AtomicBoolean vaultDown = new AtomicBoolean(true);
        QuarkusMock.installMockForType(vaultWhoseFindFails(job, vaultDown), PayloadVault.class);

        replay(operator, "r-stuck-outage", "re-issue during a vault outage").then().statusCode(503)
                .contentType("application/problem+json").body("title", equalTo("UNAVAILABLE"))
                .body("detail", containsString("the payload vault did not answer"))
                .body("detail", containsString("stays REPLAYING"));
        LedgerRecord after = ledger.find(job).orElseThrow();
        assertEquals(JobState.REPLAYING, after.state(), "nothing was written: the job is as stuck as it was");
        assertEquals(2, after.generation());
        AuditEntry failed = replayAudited("r-stuck-outage");
        assertEquals("REFUSED_UNAVAILABLE", failed.outcome());
        assertEquals("re-issue during a vault outage", failed.reason());

        vaultDown.set(false);
        handler.legacyReader(true);
        replay(operator, "r-stuck-outage", "vault is back").then().statusCode(202).body("generation", equalTo(3));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-stuck-outage") == JobState.SUCCEEDED);
    }

    @Test
    void aReplayWhoseDeadLetterCopyIsNotDeletedAfterTheSendIsStillAnsweredAndAuditedAsReplayed() {
        tenant("t-undeleted", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-undeleted", "t-undeleted");
        JobKey job = key("r-undeleted");
        // As for a job quarantined before the vault existed: its payload is only in the dead-letter queue.
        vault.discard(job, Integer.MAX_VALUE);
        DeleteRefusingArchive refusing = new DeleteRefusingArchive(sqs, urls);
        QuarkusMock.installMockForType(refusing, PayloadArchive.class);
        handler.legacyReader(true);

        replay(operator, "r-undeleted", "reader shipped").then().statusCode(202).body("outcome", equalTo("REPLAYED"))
                .body("generation", equalTo(2));
        assertTrue(audit.forJob("r-undeleted", 10).stream().anyMatch(e -> e.outcome().equals("REPLAYED") && e.generation() == 2),
                "the replay is audited");
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-undeleted") == JobState.SUCCEEDED);
        assertEquals(1, refusing.deleteRefused(), "the copy the replay could not delete was still held");
    }

    /**
     * README: a store that does not answer gets 503. The quarantine table's outage answered 500 on nearly every job endpoint.
     * A resolve is decided by the ledger: it resolves, and the record keeps its old status until it expires.
     */
    @Test
    void whileTheQuarantineTableDoesNotAnswerTheJobEndpointsAnswer503AndAResolveStillResolves() {
        tenant("t-table-down", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-table-down", "t-table-down");
        try (DynamoDbClient down = EmulatorClients.dynamoDown()) {
            QuarkusMock.installMockForType(new DynamoQuarantineStore(down, names.quarantineTable(), Clock.systemUTC()), QuarantineStore.class);

            given().auth().oauth2(viewer).get("/ops/quarantine?tenant=t-table-down").then().statusCode(503)
                    .contentType("application/problem+json").body("detail", containsString("the quarantine table did not answer"));
            given().auth().oauth2(viewer).get("/ops/quarantine/r-table-down").then().statusCode(503)
                    .contentType("application/problem+json").body("detail", containsString("the quarantine table did not answer"));
            replay(operator, "r-table-down", "during the outage").then().statusCode(503).contentType("application/problem+json");
            assertEquals(JobState.QUARANTINED, state("r-table-down"), "nothing changed");

            given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("reason", "customer withdrew the permit"))
                    .post("/ops/quarantine/r-table-down/resolve?tenant=t-table-down").then().statusCode(200)
                    .body("outcome", equalTo("RESOLVED"));
            assertEquals(JobState.RESOLVED, state("r-table-down"));
        }
    }

    /**
     * An outage of the quarantine table is not the ledger's: a copy that needs the table (one of a quarantined job, whose
     * quarantine it completes) comes back later, and consumption goes on for every other job, since the ledger, which every
     * run needs first, answers. It used to close the ledger gate: every worker paused, logging that the ledger was down.
     */
    @Test
    void aQuarantineTableOutageLeavesConsumptionRunning() {
        tenant("t-qt-down", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-qt-copy", "t-qt-down");
        String ledgerDown = "poison_guard_outcomes_total{failure_class=\"none\",outcome=\"ledger_unavailable\"}";
        try (DynamoDbClient down = EmulatorClients.dynamoDown()) {
            QuarkusMock.installMockForType(new DynamoQuarantineStore(down, names.quarantineTable(), Clock.systemUTC()), QuarantineStore.class);
            String redeliver = "poison_guard_outcomes_total{failure_class=\"none\",outcome=\"left_to_redeliver\"}";
            double before = counter(ledgerDown);
            double redeliveredBefore = counter(redeliver);
            queues.send(Queues.permitV1("P-r-qt-copy"), Queues.permitAttributes("r-qt-copy", "t-qt-down", 1));
            await().atMost(Duration.ofSeconds(30)).until(() -> counter(redeliver) > redeliveredBefore);
            queues.send(Queues.permitV3("P-qt-ok"), Queues.permitAttributes("r-qt-ok", "t-qt-down", 3));
            await().atMost(Duration.ofSeconds(30)).until(() -> state("r-qt-ok") == JobState.SUCCEEDED);
            assertEquals(before, counter(ledgerDown), "no copy was given back for a ledger outage");
        }
    }

    private double counter(String series) {
        String metrics = management().get("/q/metrics").then().extract().asString();
        return metrics.lines().filter(l -> l.startsWith(series + " ")).mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1)))
                .findFirst().orElse(0.0);
    }

    /**
     * A replay that went out is answered as replayed, whether or not its audit entry could be written then (the failure is
     * logged); reading the audit trail while it does not answer is a 503.
     */
    @Test
    void aReplaySentWhileTheAuditTrailDoesNotAnswerIsStillAnsweredReplayed() {
        tenant("t-audit-down", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-audit-down", "t-audit-down");
        handler.legacyReader(true);
        try (DynamoDbClient down = EmulatorClients.dynamoDown()) {
            QuarkusMock.installMockForType(new DynamoAuditLog(down, names.auditTable(), Clock.systemUTC()), AuditLog.class);

            replay(operator, "r-audit-down", "reader shipped").then().statusCode(202).body("outcome", equalTo("REPLAYED"))
                    .body("generation", equalTo(2));
            given().auth().oauth2(viewer).get("/ops/audit?jobId=r-audit-down").then().statusCode(503)
                    .contentType("application/problem+json").body("detail", containsString("the audit trail did not answer"));
            await().atMost(Duration.ofSeconds(30)).until(() -> state("r-audit-down") == JobState.SUCCEEDED);
        }
    }

    @Test
    void aPayloadViewWhileTheVaultDoesNotAnswerIsA503Problem() {
        tenant("t-view", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-view", "t-view");
        QuarkusMock.installMockForType(vaultWhoseFindFails(key("r-view"), new AtomicBoolean(true)), PayloadVault.class);

        given().auth().oauth2(Tokens.of("pat", "payload-reader")).get("/ops/quarantine/r-view/payload?reason=diagnose")
                .then().statusCode(503).contentType("application/problem+json")
                .body("detail", containsString("the payload vault did not answer"));
    }

    /** The dead-letter archive, except that SQS refuses every delete; what it refused can be deleted afterwards. */
    static final class DeleteRefusingArchive extends SqsPayloadArchive {
        final List<ArchivedMessage> refused = new CopyOnWriteArrayList<>();

        DeleteRefusingArchive(SqsClient sqs, QueueUrls urls) {
            super(sqs, urls);
        }

        @Override
        public int delete(List<ArchivedMessage> copies) {
            refused.addAll(copies);
            throw SqsException.builder().statusCode(500).message("We encountered an internal error. Please try again.").build();
        }

        /** Deletes the refused copies for real, so that no held message is left to the tests after this one. */
        int deleteRefused() {
            return super.delete(refused);
        }
    }

    /** The service's vault, except that reading {@code broken}'s payload finds DynamoDB not answering while {@code down} is set. */
    private PayloadVault vaultWhoseFindFails(JobKey broken, AtomicBoolean down) {
        PayloadVault real = ClientProxy.unwrap(vault);
        return new PayloadVault() {
            @Override
            public boolean enabled() {
                return real.enabled();
            }

            @Override
            public void keep(KeptPayload payload) {
                real.keep(payload);
            }

            @Override
            public Optional<KeptPayload> find(JobKey key) {
                if (down.get() && key.equals(broken)) {
                    throw new StoreUnavailable("the payload vault", false, SdkClientException.create("connection reset"));
                }
                return real.find(key);
            }

            @Override
            public void discard(JobKey key, int below) {
                real.discard(key, below);
            }
        };
    }

    @Test
    void aReplayAfterTheTenantLostPermissionIsRefusedWith403AndAudited() {
        tenant("t-revoked", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-revoked", "t-revoked");
        tenant("t-revoked", "SUSPENDED", "permit-report");

        replay(operator, "r-revoked", "customer asked").then().statusCode(403).body("title", equalTo("TENANT_NOT_AUTHORIZED"))
                .body("detail", containsString("SUSPENDED"));
        assertEquals(JobState.QUARANTINED, state("r-revoked"));
        assertTrue(audit.forJob("r-revoked", 10).stream().anyMatch(e -> e.outcome().equals("REFUSED_TENANT_NOT_AUTHORIZED")
                && e.actor().equals("olga")), "the refusal is audited");
    }

    @Test
    void theWorkerRefusesAReplayedJobWhoseTenantLostPermissionBeforeItRan() {
        tenant("t-late", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-late", "t-late");
        handler.legacyReader(true);
        poller.stop();
        replay(operator, "r-late", "reader shipped").then().statusCode(202);
        tenant("t-late", "ACTIVE");
        poller.start();

        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-late") == JobState.QUARANTINED
                && ledger.find(key("r-late")).orElseThrow().generation() == 2);
        LedgerRecord r = ledger.find(key("r-late")).orElseThrow();
        assertTrue(r.quarantineReason().contains("tenant-not-authorized"), r.quarantineReason());
        assertEquals(0, noticesFor("r-late").size(), "the handler did not run");
    }

    @Test
    void twoConcurrentReplaysOfOneJobGiveOneReplayOneConflictAndOneNotice() throws Exception {
        tenant("t-race", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-race", "t-race");
        handler.legacyReader(true);

        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<Integer>> calls = IntStream.range(0, 2).mapToObj(i -> CompletableFuture.supplyAsync(() -> {
            try {
                go.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return replay(operator, "r-race", "race " + i).statusCode();
        })).toList();
        go.countDown();
        List<Integer> statuses = calls.stream().map(CompletableFuture::join).sorted().toList();
        assertEquals(List.of(202, 409), statuses);

        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-race") == JobState.SUCCEEDED);
        assertEquals(2, ledger.find(key("r-race")).orElseThrow().generation());
        assertEquals(1, noticesFor("r-race").size(), "one result, one notice");
    }

    @Test
    void aReplayAfterThePayloadIsGoneAnswersUnrecoverableAndTheRecordSaysSo() {
        tenant("t-gone", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-gone", "t-gone");
        List<ArchivedMessage> copies = archive.take(key("r-gone"));
        assertEquals(1, copies.size());
        archive.delete(copies);
        // The vault's entry ends with the record's retention; here it is gone early, as after its TTL.
        assertTrue(vault.find(key("r-gone")).isPresent());
        vault.discard(key("r-gone"), Integer.MAX_VALUE);
        await().atMost(Duration.ofSeconds(5)).until(() -> quarantine.find(key("r-gone")).orElseThrow().quarantinedAt()
                .isBefore(Instant.now().minusSeconds(1)));

        replay(operator, "r-gone", "retention test").then().statusCode(410).body("title", equalTo("UNRECOVERABLE"));
        assertEquals(JobState.UNRECOVERABLE, state("r-gone"));
        assertEquals(QuarantineStatus.UNRECOVERABLE, quarantine.find(key("r-gone")).orElseThrow().status());
        given().auth().oauth2(viewer).get("/ops/quarantine/r-gone").then().statusCode(200)
                .body("record.status", equalTo("UNRECOVERABLE")).body("ledgerState", equalTo("UNRECOVERABLE"));
    }

    /**
     * A payload is kept only for a quarantined job (or one whose replay is under way). A view of any other job, one that
     * succeeded say, found no vault entry and scanned the whole dead-letter queue twice under the process's one scan lock,
     * hiding every copy meanwhile, to answer 410: a payload reader scoped to one tenant could stall every tenant's
     * replays. It is refused at once now, naming the job's state, and audited.
     */
    @Test
    void aPayloadViewOfAJobThatWasNeverQuarantinedIsRefusedWithoutScanningTheDeadLetterQueue() {
        tenant("t-ok", "ACTIVE", "permit-report");
        queues.send(Queues.permitV3("P-r-ok"), Queues.permitAttributes("r-ok", "t-ok", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("r-ok") == JobState.SUCCEEDED);

        String reader = Tokens.of("pat", "payload-reader");
        given().auth().oauth2(reader).contentType(ContentType.JSON).body(Map.of("reason", "ticket 77"))
                .post("/ops/quarantine/r-ok/payload?tenant=t-ok").then().statusCode(409)
                .body("detail", containsString("SUCCEEDED"));
        assertTrue(audit.forJob("r-ok", 10).stream().anyMatch(e -> e.action().name().equals("VIEW_PAYLOAD")
                && "REFUSED_NOT_QUARANTINED".equals(e.outcome()) && "pat".equals(e.actor())), "the refused view is audited");
    }

    @Test
    void rolesGovernTheApiAndThePayloadPathIsAudited() {
        tenant("t-auth", "ACTIVE", "permit-report");
        quarantineOldSchemaJob("r-auth", "t-auth");

        given().get("/ops/quarantine").then().statusCode(401);
        given().auth().oauth2("not-a-token").get("/ops/quarantine").then().statusCode(401);
        replay(viewer, "r-auth", "viewer tries").then().statusCode(403);
        given().auth().oauth2(viewer).contentType(ContentType.JSON).body(Map.of("reason", "look"))
                .post("/ops/quarantine/r-auth/replay").then().statusCode(200).body("outcome", equalTo("WOULD_REPLAY"));
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("dryRun", false))
                .post("/ops/quarantine/r-auth/replay").then().statusCode(400).contentType("application/problem+json");
        given().auth().oauth2(viewer).get("/ops/quarantine/r-auth/payload?reason=curious").then().statusCode(403);
        given().auth().oauth2(operator).get("/ops/quarantine/r-auth/payload?reason=curious").then().statusCode(403);
        given().auth().oauth2(viewer).get("/ops/quarantine?failureClass=PERMANENT&tenant=t-auth").then().statusCode(200)
                .body("items.jobId", org.hamcrest.Matchers.hasItem("r-auth"))
                .body("items[0].reason", containsString("schema version 1"));

        String reader = Tokens.of("pat", "payload-reader");
        given().auth().oauth2(reader).get("/ops/quarantine/r-auth/payload?reason=diagnose customer ticket 9417").then().statusCode(200)
                .body("body", equalTo(Queues.permitV1("P-r-auth")));
        AuditEntry view = audit.forJob("r-auth", 10).stream().filter(e -> e.action().name().equals("VIEW_PAYLOAD")).findFirst().orElseThrow();
        assertEquals("pat", view.actor());
        assertEquals("diagnose customer ticket 9417", view.reason());
        assertTrue(view.detail() == null || !view.detail().contains("Old Shape"), "no payload in the audit entry");
        assertEquals(JobState.QUARANTINED, state("r-auth"), "viewing changes nothing");

        // The same view by POST, its reason in the body: a URL's query string is what proxies and access logs keep.
        given().auth().oauth2(viewer).contentType(ContentType.JSON).body(Map.of("reason", "curious"))
                .post("/ops/quarantine/r-auth/payload").then().statusCode(403);
        given().auth().oauth2(reader).contentType(ContentType.JSON).body(Map.of()).post("/ops/quarantine/r-auth/payload")
                .then().statusCode(400).contentType("application/problem+json");
        given().auth().oauth2(reader).contentType(ContentType.JSON).body(Map.of("reason", "ticket 9418, by POST"))
                .post("/ops/quarantine/r-auth/payload").then().statusCode(200).body("body", equalTo(Queues.permitV1("P-r-auth")));
        assertTrue(audit.forJob("r-auth", 10).stream().anyMatch(e -> e.action().name().equals("VIEW_PAYLOAD")
                && "ticket 9418, by POST".equals(e.reason()) && "pat".equals(e.actor())), "the POST view is audited with its reason");
    }

    @Test
    void aBulkReplayStopsAtAFailedCanaryThenCompletesAtTheConfiguredRateOnceTheReaderShipsWhileValidJobsFlow() {
        tenant("t-bulk", "ACTIVE", "permit-report");
        List<String> jobs = IntStream.rangeClosed(1, 20).mapToObj(i -> String.format("bulk-%02d", i)).toList();
        jobs.forEach(id -> queues.send(Queues.permitV1("P-" + id), Queues.permitAttributes(id, "t-bulk", 1)));
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream().allMatch(id -> state(id) == JobState.QUARANTINED
                && quarantine.find(key(id)).isPresent()) && queues.depth(names.jobsQueue()) == 0);
        Map<String, Object> selection = Map.of("failureClass", "PERMANENT", "tenant", "t-bulk", "limit", 50, "reason", "release-27 reader");

        given().auth().oauth2(viewer).contentType(ContentType.JSON).body(selection).post("/ops/replays").then().statusCode(200)
                .body("dryRun", equalTo(true)).body("jobs.size()", equalTo(20)).body("jobs.outcome", org.hamcrest.Matchers.everyItem(equalTo("WOULD_REPLAY")))
                .body("complete", equalTo(true));

        Map<String, Object> execute = new java.util.HashMap<>(selection);
        execute.put("dryRun", false);
        String failing = given().auth().oauth2(operator).contentType(ContentType.JSON).body(execute).post("/ops/replays")
                .then().statusCode(202).extract().path("id");
        String canaryStatus = awaitBatch(failing);
        assertEquals("CANARY_FAILED", canaryStatus);
        String canary = given().auth().oauth2(viewer).get("/ops/replays/" + failing).then().extract().path("canaryJobId");
        assertEquals(2, ledger.find(key(canary)).orElseThrow().generation(), "the canary ran as generation 2 and failed");
        assertEquals(19, jobs.stream().filter(id -> !id.equals(canary))
                .filter(id -> state(id) == JobState.QUARANTINED && ledger.find(key(id)).orElseThrow().generation() == 1).count(),
                "the other 19 stayed quarantined, untouched");
        String why = given().auth().oauth2(viewer).get("/ops/replays/" + failing).then().extract().path("detail");
        assertTrue(why.contains(canary) && why.contains("19"), why);

        handler.legacyReader(true);
        String fixed = given().auth().oauth2(operator).contentType(ContentType.JSON).body(execute).post("/ops/replays")
                .then().statusCode(202).extract().path("id");
        List<String> healthy = IntStream.range(0, 10).mapToObj(i -> "flow-" + i).toList();
        healthy.forEach(id -> queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "t-bulk", 3)));
        await().atMost(Duration.ofSeconds(30)).until(() -> healthy.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
        Instant healthyDone = Instant.now();
        assertEquals("COMPLETED", awaitBatch(fixed));
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));

        List<Message> notices = queues.drain(names.noticesQueue());
        Map<String, Long> perJob = notices.stream().collect(Collectors.groupingBy(m -> Queues.attr(m, "job-id"), Collectors.counting()));
        jobs.forEach(id -> assertEquals(1L, perJob.get(id), "one notice for " + id));

        String secondCanary = given().auth().oauth2(viewer).get("/ops/replays/" + fixed).then().extract().path("canaryJobId");
        Instant batchDone = Instant.parse(given().auth().oauth2(viewer).get("/ops/replays/" + fixed).then().extract().path("finishedAt"));
        // The 19 after the canary go in waves (2, 4, 8, 5), each once the one before it has succeeded: the rate is the pace
        // within a wave, and no two sends anywhere are closer than it allows.
        Map<String, List<Instant>> sentAtByWave = new java.util.TreeMap<>();
        for (String id : jobs) {
            if (!id.equals(secondCanary)) {
                audit.forJob(id, 20).stream().filter(e -> e.outcome().equals("REPLAYED") && e.reason().contains(fixed))
                        .forEach(e -> sentAtByWave.computeIfAbsent(e.reason().substring(e.reason().lastIndexOf(", ") + 2), w -> new ArrayList<>())
                                .add(e.at()));
            }
        }
        List<Instant> sentAt = sentAtByWave.values().stream().flatMap(List::stream).sorted().toList();
        assertEquals(19, sentAt.size());
        assertEquals(List.of(2, 4, 8, 5), sentAtByWave.values().stream().map(List::size).toList(), sentAtByWave.keySet().toString());
        double seconds = Duration.between(sentAt.get(0), sentAt.get(sentAt.size() - 1)).toMillis() / 1000.0;
        double overall = (sentAt.size() - 1) / seconds;
        assertTrue(overall <= RATE * 1.1, "replays went out at " + overall + "/s, above the configured " + RATE + "/s");
        List<Instant> widest = sentAtByWave.values().stream().max(java.util.Comparator.comparingInt(List::size)).orElseThrow()
                .stream().sorted().toList();
        double measured = (widest.size() - 1) / (Duration.between(widest.get(0), widest.get(widest.size() - 1)).toMillis() / 1000.0);
        assertTrue(measured <= RATE * 1.1, "a wave went out at " + measured + "/s, above the configured " + RATE + "/s");
        assertTrue(measured >= RATE * 0.5, "a wave went out at " + measured + "/s, far below the configured " + RATE + "/s");
        System.out.printf("%n[bulk replay] failing canary %s stopped the batch (%s); after the fix: 20/20 SUCCEEDED, one notice each;"
                        + " 19 widening replays in waves of 2, 4, 8 and 5, the widest at %.2f/s (configured %.1f/s); 10 healthy jobs sent during the batch all completed %d ms"
                        + " before it finished%n",
                canary, canaryStatus, measured, RATE, Duration.between(healthyDone, batchDone).toMillis());
    }

    private String awaitBatch(String id) {
        await().atMost(Duration.ofSeconds(90)).until(() -> {
            String s = given().auth().oauth2(viewer).get("/ops/replays/" + id).then().statusCode(200).extract().path("status");
            return !s.equals("CANARY_RUNNING") && !s.equals("WIDENING");
        });
        return given().auth().oauth2(viewer).get("/ops/replays/" + id).then().extract().path("status");
    }

    @Test
    void aBulkReplayWhoseProgressOrFinalStateIsNotKeptOnceStillCompletesAndIsAuditedAsCompleted() {
        tenant("t-bulk-flaky", "ACTIVE", "permit-report");
        List<String> jobs = List.of("bf-1", "bf-2", "bf-3");
        jobs.forEach(id -> queues.send(Queues.permitV1("P-" + id), Queues.permitAttributes(id, "t-bulk-flaky", 1)));
        await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream().allMatch(id -> state(id) == JobState.QUARANTINED
                && quarantine.find(key(id)).isPresent()) && queues.depth(names.jobsQueue()) == 0);
        // DynamoDB refuses one progress write and the first write of the final state (a throttle, a 5xx).
        FlakyBulkStore flaky = new FlakyBulkStore(bulkStore);
        QuarkusMock.installMockForType(flaky, BulkReplayStore.class);
        handler.legacyReader(true);

        String id = given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("failureClass", "PERMANENT",
                "tenant", "t-bulk-flaky", "limit", 10, "reason", "reader shipped", "dryRun", false)).post("/ops/replays")
                .then().statusCode(202).extract().path("id");

        assertEquals("COMPLETED", awaitBatch(id));
        assertEquals(3, (int) given().auth().oauth2(viewer).get("/ops/replays/" + id).then().extract().path("outcomes.size()"));
        assertEquals(2, flaky.refused.get(), "both refusals happened");
        // The end is shown as soon as it is reached, and audited then.
        await().atMost(Duration.ofSeconds(10)).until(() -> audit.forJob("bulk:" + id, 10).size() == 2);
        List<AuditEntry> entries = audit.forJob("bulk:" + id, 10);
        assertEquals(List.of("STARTED", "COMPLETED"), entries.stream().map(AuditEntry::outcome).toList(), "audited when it started and ended");
        await().atMost(Duration.ofSeconds(30)).until(() -> jobs.stream().allMatch(j -> state(j) == JobState.SUCCEEDED));
    }

    /** The service's bulk replay store, except that it refuses the first WIDENING write and the first COMPLETED one. */
    static final class FlakyBulkStore implements BulkReplayStore {
        final BulkReplayStore real;
        final java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.Set<BulkReplay.Status> refusedOnce = java.util.concurrent.ConcurrentHashMap.newKeySet();

        FlakyBulkStore(BulkReplayStore real) {
            this.real = ClientProxy.unwrap(real);
        }

        @Override
        public void put(BulkReplay batch) {
            if ((batch.status() == BulkReplay.Status.WIDENING || batch.status() == BulkReplay.Status.COMPLETED)
                    && refusedOnce.add(batch.status())) {
                refused.incrementAndGet();
                throw new StoreUnavailable("the bulk replay table", false, SdkClientException.create("connection reset"));
            }
            real.put(batch);
        }

        @Override
        public Optional<BulkReplay> find(String id) {
            return real.find(id);
        }
    }
}

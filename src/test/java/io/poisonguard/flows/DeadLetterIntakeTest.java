package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.pipeline.Poller;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.DeadLetterInbox;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.replay.PayloadArchive;
import io.poisonguard.vault.PayloadVault;
import io.poisonguard.testing.AlertSinks;
import io.quarkus.test.junit.QuarkusMock;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 10, item 2: messages that reach the DLQ without the service (SQS's redrive backstop, an
 * operator's hand) are adopted by the dead-letter intake as REDRIVEN quarantines with one alert each,
 * then replay like any quarantined job; and a parked job's copy moved back to the main queue goes back
 * to the DLQ instead of being dropped as a stale generation.
 */
@QuarkusTest
@TestProfile(DeadLetterIntakeTest.Profile.class)
class DeadLetterIntakeTest extends FlowTest {
    /** Every class limit at 1 lets the redrive backstop sit at 20 (it must exceed their sum, 9, plus 10). */
    static final int BACKSTOP = 20;

    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(AlertSinks.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> c = new HashMap<>();
            for (FailureClass fc : FailureClass.values()) {
                c.put("poison-guard.failure." + fc.key() + ".max-attempts", "1");
            }
            c.put("poison-guard.resources.redrive-max-receive-count", Integer.toString(BACKSTOP));
            c.put("poison-guard.consumer.enabled", "false");
            c.put("poison-guard.dead-letter.sweep-interval", "1s");
            c.put("poison-guard.replay.settle-time", "1s");
            return c;
        }
    }

    @Inject
    Poller poller;
    @Inject
    io.poisonguard.sqs.QueueUrls urls;
    @Inject
    PermitReportHandler handler;
    @Inject
    PayloadArchive archive;
    @Inject
    PayloadVault vault;

    final String operator = Tokens.of("olga", "operator");
    final String admin = Tokens.of("ada", "admin");

    @AfterEach
    void tearDown() {
        handler.legacyReader(false);
        poller.stop();
        // Every case starts on an empty DLQ, whatever order JUnit runs them in and wherever one stopped.
        Queues queues = queues();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            queues.drain(names.deadLetterQueue());
            return queues.depth(names.deadLetterQueue()) == 0;
        });
    }

    private void tenant(String tenant) {
        registerTenant(tenant, "ACTIVE", "permit-report");
    }

    /** Replays through the API, asking again while the guard answers "try again" (a DLQ scan may hold the copy briefly). */
    private Response replay(String jobId) {
        AtomicReference<Response> last = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            Response r = given().auth().oauth2(operator).contentType(ContentType.JSON)
                    .body(Map.of("reason", "adopted orphan, provider fixed", "dryRun", false)).post("/ops/quarantine/" + jobId + "/replay");
            last.set(r);
            return !(r.statusCode() == 409 && r.asString().contains("CONFLICT"));
        });
        return last.get();
    }

    /** The service's count of dead-letter adoptions. */
    private static double adoptedSoFar() {
        return management().get("/q/metrics").asString().lines().filter(l -> l.startsWith("poison_guard_dead_letter_adopted_total "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst().orElse(0);
    }

    private long alertsFor(String jobId) {
        return AlertSinks.WEBHOOK.stream().filter(a -> a.contains("\"event\":\"job.quarantined\"") && a.contains("\"jobId\":\"" + jobId + "\""))
                .count();
    }

    private long noticesFor(String jobId) {
        return queues().drain(names.noticesQueue()).stream().filter(m -> jobId.equals(Queues.attr(m, "job-id"))).count();
    }

    @Test
    void jobsTheRedriveBackstopOrAnOperatorMovedToTheDlqAreAdoptedAlertedOnceAndReplayable() {
        Queues queues = queues();
        double adoptedBefore = adoptedSoFar();
        tenant("t-orphan");
        // Identity from the attribute, and from the body (no job-id attribute).
        queues.send(Queues.permitV3("P-ORPHAN-1"), Queues.permitAttributes("orphan-attr", "t-orphan", 3));
        Map<String, String> noId = Queues.permitAttributes("unused", "t-orphan", 3);
        noId.remove("job-id");
        queues.send("{\"jobId\":\"orphan-body\"," + Queues.permitV3("P-ORPHAN-2").substring(1), noId);

        // No consumer runs: a receiver that never finishes keeps the copies coming back until SQS's
        // redrive policy moves them to the DLQ.
        String jobsUrl = queues.url(names.jobsQueue());
        await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20)).until(() -> {
            sqs.receiveMessage(b -> b.queueUrl(jobsUrl).maxNumberOfMessages(10).visibilityTimeout(0));
            return queues.depth(names.jobsQueue()) == 0;
        });

        // And one moved by hand, with neither a job-id attribute nor a body field: its MessageId is its identity.
        Map<String, String> byHand = Queues.permitAttributes("unused", "t-orphan", 3);
        byHand.remove("job-id");
        String handId = sqs.sendMessage(b -> b.queueUrl(queues.url(names.deadLetterQueue())).messageBody(Queues.permitV3("P-ORPHAN-3"))
                .messageAttributes(Queues.sdk(byHand))).messageId();

        List<String> jobs = List.of("orphan-attr", "orphan-body", handId);
        await().atMost(Duration.ofSeconds(30)).until(() -> jobs.stream().allMatch(j -> quarantine.find(key(j)).isPresent()
                && state(j) == JobState.QUARANTINED));
        for (String j : jobs) {
            QuarantineRecord record = quarantine.find(key(j)).orElseThrow();
            LedgerRecord l = ledger.find(key(j)).orElseThrow();
            assertEquals(FailureClass.REDRIVEN, record.failureClass(), j);
            assertEquals(FailureClass.REDRIVEN, l.quarantineClass(), j);
            assertEquals("t-orphan", record.tenant(), j);
            assertEquals("permit-report", record.jobType(), j);
            System.out.println("[dead-letter] " + j + " adopted: receives=" + record.receiveCount() + " reason=" + record.reason());
            assertTrue(record.receiveCount() != null && record.receiveCount() >= 1, j + " records its receive count");
        }
        assertTrue(quarantine.find(key("orphan-attr")).orElseThrow().receiveCount() >= BACKSTOP,
                "a redriven copy was received at least maxReceiveCount times");
        // Later sweeps find only adopted copies: still exactly one alert per job, and each job's one copy stays in the DLQ.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> jobs.stream().allMatch(j -> alertsFor(j) == 1)
                && queues.depth(names.deadLetterQueue()) == 3);
        // Counted once each (the class's other tests adopt jobs of their own, in an order JUnit chooses).
        await().atMost(Duration.ofSeconds(5)).until(() -> adoptedSoFar() >= adoptedBefore + 3);
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> adoptedSoFar() == adoptedBefore + 3);

        poller.start();
        for (String j : jobs) {
            Response r = replay(j);
            assertEquals(202, r.statusCode(), r.asString());
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> jobs.stream().allMatch(j -> state(j) == JobState.SUCCEEDED));
        for (String j : jobs) {
            assertEquals(2, ledger.find(key(j)).orElseThrow().generation(), j + " replayed as generation 2, same identity");
        }
        // A replay from the vault answers once the copy is sent; the dead-letter copies are deleted after that, in the
        // background (and a copy a dead-letter sweep holds at that moment is looked for again): wait for them to go.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertEquals(0, queues.depth(names.deadLetterQueue()), "replay took the adopted copies"));
    }

    @Test
    void aHealthyJobTheRedriveBackstopMovedWhileItsLedgerStillTracksItGoesBackToTheMainQueueAndSucceeds() {
        Queues queues = queues();
        tenant("t-held");
        // Neither a job-id attribute nor a body jobId: the job is known by its MessageId, which a message sent anew would not keep.
        Map<String, String> noId = Queues.permitAttributes("unused", "t-held", 3);
        noId.remove("job-id");
        String jobId = queues.send(Queues.permitV3("P-HELD"), noId);
        // The job waits for its next attempt with nothing charged to it: its copies were given back uncounted (held by the
        // systemic guard, returned while consumption was paused), and SQS counted every one of those receives toward
        // its redrive backstop. A long outage moves a healthy backlog to the DLQ this way.
        java.time.Instant now = java.time.Instant.now();
        ledger.write(LedgerRecord.fresh(jobId, "t-held", "permit-report", 1, now).moveTo(JobState.RETRY_WAIT, now));
        String jobsUrl = queues.url(names.jobsQueue());
        await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20)).until(() -> {
            sqs.receiveMessage(b -> b.queueUrl(jobsUrl).maxNumberOfMessages(10).visibilityTimeout(0));
            return queues.depth(names.jobsQueue()) == 0;
        });

        // The sweep gives it back to the main queue, where the ledger's own limits judge it: no quarantine, no alert.
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 1 && queues.depth(names.deadLetterQueue()) == 0);
        assertTrue(quarantine.find(key(jobId)).isEmpty(), "a job its ledger still tracks is not quarantined as REDRIVEN");
        assertEquals(JobState.RETRY_WAIT, state(jobId));
        assertEquals(0, alertsFor(jobId));
        management().get("/q/metrics").then().body(containsString("poison_guard_dead_letter_returned_total 1.0"));
        Message back = sqs.receiveMessage(b -> b.queueUrl(jobsUrl).maxNumberOfMessages(1).visibilityTimeout(0).messageAttributeNames("All"))
                .messages().get(0);
        assertEquals(jobId, Queues.attr(back, "job-id"), "the copy sent back keeps the job's identity");
        assertTrue(Queues.attr(back, "dead-letter-returns").startsWith("1/"), "and counts its return, at the ledger's version");
        assertEquals("t-held", Queues.attr(back, "tenant"));

        poller.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> state(jobId) == JobState.SUCCEEDED);
        assertEquals(1, noticesFor(jobId), "it ran once and sent its notice once");
        assertEquals(1, ledger.find(key(jobId)).orElseThrow().attempt());
    }

    @Test
    void anOrphanWhoseDeleteFailsOnceAfterItsRecordIsWrittenIsStillAlertedOnce() {
        tenant("t-flaky");
        // The first delete of this job's orphan is refused (a throttle, a 5xx) after its record is written.
        FlakyDeleteInbox real = new FlakyDeleteInbox(sqs, urls);
        QuarkusMock.installMockForType(real, DeadLetterInbox.class);
        Queues queues = queues();
        sqs.sendMessage(b -> b.queueUrl(queues.url(names.deadLetterQueue())).messageBody(Queues.permitV3("P-FLAKY"))
                .messageAttributes(Queues.sdk(Queues.permitAttributes("orphan-flaky", "t-flaky", 3))));

        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("orphan-flaky")).isPresent() && real.refused.get() == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> alertsFor("orphan-flaky") >= 1);
        // Later sweeps find the job parked and its record written: still one alert.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> alertsFor("orphan-flaky") == 1);
    }

    /** The service's DLQ inbox, except that it refuses the first delete of job orphan-flaky's copy. */
    static final class FlakyDeleteInbox extends io.poisonguard.sqs.SqsDeadLetterInbox {
        final java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();

        FlakyDeleteInbox(software.amazon.awssdk.services.sqs.SqsClient sqs, io.poisonguard.sqs.QueueUrls urls) {
            super(sqs, urls, java.time.Clock.systemUTC());
        }

        @Override
        public void delete(io.poisonguard.admission.InboundMessage m) {
            if (m.attribute("job-id").filter("orphan-flaky"::equals).isPresent() && refused.compareAndSet(0, 1)) {
                throw software.amazon.awssdk.services.sqs.model.SqsException.builder().statusCode(500)
                        .message("We encountered an internal error. Please try again.").build();
            }
            super.delete(m);
        }
    }

    @Test
    void aGenerationTwoQuarantinedJobsCopyMovedBackToTheMainQueueIsForwardedToTheDlqAgainNotDropped() {
        Queues queues = queues();
        tenant("t-back");
        poller.start();
        queues.send(Queues.permitV1("P-BACK"), Queues.permitAttributes("moved-back", "t-back", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("moved-back") == JobState.QUARANTINED
                && quarantine.find(key("moved-back")).isPresent() && queues.depth(names.jobsQueue()) == 0);
        // Replayed without the reader: it fails again and is quarantined at generation 2.
        assertEquals(202, replay("moved-back").statusCode());
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(key("moved-back")).map(r -> r.state() == JobState.QUARANTINED
                && r.generation() == 2).orElse(false) && queues.depth(names.jobsQueue()) == 0 && queues.depth(names.deadLetterQueue()) == 1);

        // An operator moves the dead-letter copy back to the main queue as it is.
        String dlqUrl = queues.url(names.deadLetterQueue());
        List<Message> copies = sqs.receiveMessage(b -> b.queueUrl(dlqUrl).maxNumberOfMessages(10).waitTimeSeconds(1)
                .messageAttributeNames("All")).messages();
        assertEquals(1, copies.size());
        Message copy = copies.get(0);
        assertEquals("2", Queues.attr(copy, "generation"), "the dead-letter copy keeps its generation");
        Map<String, MessageAttributeValue> attrs = copy.messageAttributes();
        sqs.sendMessage(b -> b.queueUrl(queues.url(names.jobsQueue())).messageBody(copy.body()).messageAttributes(attrs));
        sqs.deleteMessage(b -> b.queueUrl(dlqUrl).receiptHandle(copy.receiptHandle()));

        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0 && queues.depth(names.deadLetterQueue()) == 1);
        LedgerRecord after = ledger.find(key("moved-back")).orElseThrow();
        assertEquals(JobState.QUARANTINED, after.state());
        assertEquals(2, after.generation());
        // One alert per quarantine (generations 1 and 2), none for the copy that came back.
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> alertsFor("moved-back") == 2);
        // Leave the DLQ as the other test expects to find it.
        queues.drain(names.deadLetterQueue());
    }

    /** Starts consuming, sends a release-27 job of tenant t-found and waits until its quarantine is complete. */
    private void quarantineOldSchemaJob(String jobId, String permit) {
        Queues queues = queues();
        tenant("t-found");
        poller.start();
        queues.send(Queues.permitV1(permit), Queues.permitAttributes(jobId, "t-found", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> state(jobId) == JobState.QUARANTINED
                && quarantine.find(key(jobId)).isPresent() && queues.depth(names.jobsQueue()) == 0);
    }

    /** Every copy of the job's payload gone (its dead-letter copies deleted, its vault entry passed), then a replay concludes it lost. */
    private java.time.Instant concludeUnrecoverable(String jobId) {
        // A copy a sweep holds for a moment is not seen by one scan: none may be found for a while.
        await().atMost(Duration.ofSeconds(30)).during(Duration.ofMillis(1500)).until(() -> {
            List<io.poisonguard.replay.ArchivedMessage> copies = archive.take(key(jobId));
            archive.delete(copies);
            return copies.isEmpty();
        });
        vault.discard(key(jobId), Integer.MAX_VALUE);
        assertTrue(vault.find(key(jobId)).isEmpty());
        java.time.Instant quarantinedAt = quarantine.find(key(jobId)).orElseThrow().quarantinedAt();
        await().atMost(Duration.ofSeconds(5)).until(() -> quarantinedAt.isBefore(java.time.Instant.now().minusSeconds(1)));
        assertEquals(410, replay(jobId).statusCode());
        assertEquals(JobState.UNRECOVERABLE, state(jobId));
        assertEquals(QuarantineStatus.UNRECOVERABLE, quarantine.find(key(jobId)).orElseThrow().status());
        return java.time.Instant.now();
    }

    private long replayOutcomeAlertsFor(String jobId) {
        return AlertSinks.WEBHOOK.stream().filter(a -> a.contains("\"event\":\"job.replay-outcome\"") && a.contains("\"jobId\":\"" + jobId + "\""))
                .count();
    }

    /**
     * A replayed job quarantined again at generation 2 is concluded UNRECOVERABLE, and then a copy of it turns up on the main
     * queue (someone kept one and sends it back). Before, the copy was kept in the vault and the DLQ while the job stayed
     * UNRECOVERABLE, which every replay and resolve refuses: a payload nobody could act on.
     */
    @Test
    void aCopyOfAnUnrecoverableJobThatTurnsUpOnTheMainQueueQuarantinesItAgainAsAFreshRecordThatCanBeReplayed() {
        Queues queues = queues();
        quarantineOldSchemaJob("found-main", "P-FOUND");
        assertEquals(202, replay("found-main").statusCode());
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(key("found-main")).map(r -> r.generation() == 2).orElse(false)
                && state("found-main") == JobState.QUARANTINED && queues.depth(names.jobsQueue()) == 0);
        given().auth().oauth2(operator).post("/ops/quarantine/found-main/acknowledge").then().statusCode(200);
        given().auth().oauth2(operator).contentType(ContentType.JSON).body(Map.of("text", "vendor says the payload is lost"))
                .post("/ops/quarantine/found-main/notes").then().statusCode(200);
        java.time.Instant concluded = concludeUnrecoverable("found-main");

        Map<String, String> again = Queues.permitAttributes("found-main", "t-found", 1);
        again.put("generation", "2");
        queues.send(Queues.permitV1("P-FOUND"), again);

        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-main") == JobState.QUARANTINED
                && quarantine.find(key("found-main")).map(r -> r.status() == QuarantineStatus.QUARANTINED).orElse(false)
                && queues.depth(names.jobsQueue()) == 0);
        QuarantineRecord reopened = quarantine.find(key("found-main")).orElseThrow();
        assertEquals(2, reopened.generation());
        assertTrue(reopened.quarantinedAt().isAfter(concluded), "a fresh quarantine, not the one concluded lost: " + reopened.quarantinedAt());
        assertTrue(reopened.expiresAt().isAfter(java.time.Instant.now().plus(Duration.ofDays(13))), "kept a whole retention from now");
        assertEquals(null, reopened.triage().acknowledgedBy(), "waiting to be acknowledged again");
        assertEquals(1, reopened.triage().notes().size(), "the notes stay");
        assertEquals(1, reopened.replays().size(), "the replay history stays");
        assertEquals(Queues.permitV1("P-FOUND"), vault.find(key("found-main")).orElseThrow().body());
        // One alert for each quarantine and one for the reopened one; the replay's outcome alert only for generation 2's failure.
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> alertsFor("found-main") == 3);
        assertEquals(1, replayOutcomeAlertsFor("found-main"));

        handler.legacyReader(true);
        assertEquals(202, replay("found-main").statusCode());
        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-main") == JobState.SUCCEEDED);
        assertEquals(1, noticesFor("found-main"));
        await().atMost(Duration.ofSeconds(10)).until(() -> queues.depth(names.deadLetterQueue()) == 0);
    }

    /**
     * The reopen stopped between its two writes (a worker killed there): the fresh record is written (and was alerted), the
     * ledger still says UNRECOVERABLE. An orphan of the job found in the DLQ finishes it: the ledger moves, the record is
     * not replaced, no second alert, and the job replays.
     */
    @Test
    void aReopenThatStoppedBetweenItsWritesIsFinishedByTheNextCopyFoundInTheDlq() {
        Queues queues = queues();
        quarantineOldSchemaJob("found-dlq", "P-FOUND-2");
        concludeUnrecoverable("found-dlq");
        LedgerRecord gone = ledger.find(key("found-dlq")).orElseThrow();
        java.time.Instant reopenedAt = java.time.Instant.now().plusMillis(5).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        QuarantineRecord written = QuarantineRecord.of(gone.reopened(reopenedAt, FailureClass.REDRIVEN),
                quarantine.find(key("found-dlq")).orElseThrow().diagnostics(), "m-reopen", reopenedAt, Duration.ofDays(14), List.of(),
                io.poisonguard.quarantine.DeadLetterCopy.sent("d-reopen"), io.poisonguard.quarantine.Triage.owned("operations", true));
        assertTrue(quarantine.reopen(written, quarantine.find(key("found-dlq"))));

        sqs.sendMessage(b -> b.queueUrl(queues.url(names.deadLetterQueue())).messageBody(Queues.permitV1("P-FOUND-2"))
                .messageAttributes(Queues.sdk(Queues.permitAttributes("found-dlq", "t-found", 1))));

        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-dlq") == JobState.QUARANTINED);
        assertEquals(reopenedAt, quarantine.find(key("found-dlq")).orElseThrow().quarantinedAt(), "the reopen's record stays");
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> alertsFor("found-dlq") == 1);
        handler.legacyReader(true);
        assertEquals(202, replay("found-dlq").statusCode());
        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-dlq") == JobState.SUCCEEDED);
        assertEquals(1, noticesFor("found-dlq"));
        await().atMost(Duration.ofSeconds(10)).until(() -> queues.depth(names.deadLetterQueue()) == 0);
    }

    /**
     * The replay that concluded the job lost wrote the ledger and not the record (a throttle, a worker stopped there):
     * ledger UNRECOVERABLE, record QUARANTINED. A copy that turns up then is a reopen all the same: a fresh record, one
     * alert. Before, the record write was taken for a second copy's (the record was there), so no alert went out and the
     * record kept its old quarantine time, acknowledgement and escalation.
     */
    @Test
    void aCopyOfAJobWhoseConclusionNeverReachedItsRecordIsQuarantinedAfreshAndAlerted() {
        Queues queues = queues();
        quarantineOldSchemaJob("found-half", "P-FOUND-3");
        java.time.Instant concluded = concludeUnrecoverable("found-half");
        quarantine.updateStatus(key("found-half"), QuarantineStatus.QUARANTINED, java.util.Optional.empty());

        // This time the copy is one the dead-letter intake finds.
        sqs.sendMessage(b -> b.queueUrl(queues.url(names.deadLetterQueue())).messageBody(Queues.permitV1("P-FOUND-3"))
                .messageAttributes(Queues.sdk(Queues.permitAttributes("found-half", "t-found", 1))));

        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-half") == JobState.QUARANTINED);
        QuarantineRecord reopened = quarantine.find(key("found-half")).orElseThrow();
        assertTrue(reopened.quarantinedAt().isAfter(concluded), "a fresh quarantine: " + reopened.quarantinedAt());
        assertTrue(reopened.receiveCount() != null, "the record of the copy the intake found");
        assertEquals(QuarantineStatus.QUARANTINED, reopened.status());
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> alertsFor("found-half") == 2);
    }

    /**
     * A duplicate copy of a quarantined job whose record is dated before the ledger's last write (a worker whose clock ran a
     * few milliseconds behind wrote the record) is forwarded like any other: no second alert, the record as it was, and a
     * replay goes ahead. 83065d1 took that pair for a reopen still to finish: it answered replays 409 and replaced the
     * record, alerting again.
     */
    @Test
    void aDuplicateCopyOfAJobWhoseRecordIsDatedBeforeItsLedgersWriteIsOnlyForwarded() {
        Queues queues = queues();
        quarantineOldSchemaJob("found-skew", "P-FOUND-4");
        java.time.Instant recordedAt = quarantine.find(key("found-skew")).orElseThrow().quarantinedAt();
        LedgerRecord parked = ledger.find(key("found-skew")).orElseThrow();
        ledger.write(parked.touched(recordedAt.plusMillis(20)));

        queues.send(Queues.permitV1("P-FOUND-4"), Queues.permitAttributes("found-skew", "t-found", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0 && queues.depth(names.deadLetterQueue()) == 2);

        assertEquals(recordedAt, quarantine.find(key("found-skew")).orElseThrow().quarantinedAt(), "the record as it was");
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> alertsFor("found-skew") == 1);
        handler.legacyReader(true);
        assertEquals(202, replay("found-skew").statusCode());
        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-skew") == JobState.SUCCEEDED);
    }

    /**
     * The race, made to happen: while a duplicate copy of a quarantined job keeps its payload, an operator's replay (whose
     * own vault read came just before) finds nothing and concludes the job UNRECOVERABLE. The copy used to be deleted after
     * its keep, leaving the payload in the vault and the DLQ under a job no replay or resolve accepts. It now sees the
     * ledger moved, is decided again, and reopens the job.
     */
    @Test
    void aCopyWhoseJobIsConcludedUnrecoverableWhileItKeepsThePayloadReopensIt() {
        Queues queues = queues();
        quarantineOldSchemaJob("found-race", "P-FOUND-5");
        PayloadVault real = io.quarkus.arc.ClientProxy.unwrap(vault);
        java.util.concurrent.atomic.AtomicReference<java.time.Instant> concluded = new java.util.concurrent.atomic.AtomicReference<>();
        QuarkusMock.installMockForType(new PayloadVault() {
            @Override
            public boolean enabled() {
                return real.enabled();
            }

            @Override
            public void keep(io.poisonguard.vault.KeptPayload payload) {
                real.keep(payload);
                if (payload.key().jobId().equals("found-race") && concluded.get() == null) {
                    java.time.Instant at = java.time.Instant.now();
                    concluded.set(at);
                    ledger.write(ledger.find(payload.key()).orElseThrow().moveTo(JobState.UNRECOVERABLE, at));
                    quarantine.concludeUnrecoverable(payload.key(), quarantine.find(payload.key()).orElseThrow().quarantinedAt());
                }
            }

            @Override
            public java.util.Optional<io.poisonguard.vault.KeptPayload> find(io.poisonguard.ledger.JobKey key) {
                return real.find(key);
            }

            @Override
            public void discard(io.poisonguard.ledger.JobKey key, int below) {
                real.discard(key, below);
            }
        }, PayloadVault.class);

        queues.send(Queues.permitV1("P-FOUND-5"), Queues.permitAttributes("found-race", "t-found", 1));

        await().atMost(Duration.ofSeconds(30)).until(() -> concluded.get() != null && queues.depth(names.jobsQueue()) == 0
                && state("found-race") == JobState.QUARANTINED);
        QuarantineRecord reopened = quarantine.find(key("found-race")).orElseThrow();
        assertEquals(QuarantineStatus.QUARANTINED, reopened.status());
        assertTrue(reopened.quarantinedAt().isAfter(concluded.get()), "quarantined again after the conclusion");
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4)).until(() -> alertsFor("found-race") == 2);
        handler.legacyReader(true);
        assertEquals(202, replay("found-race").statusCode());
        await().atMost(Duration.ofSeconds(30)).until(() -> state("found-race") == JobState.SUCCEEDED);
    }
}

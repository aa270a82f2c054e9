package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ScriptedHandler;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 9: faults inside the worker. Whatever the handler does (returns, throws an Error, hangs, or
 * ignores its interrupt) every attempt ends in a recorded outcome, its heartbeat stops, the job ends
 * quarantined with its class named, and healthy work keeps flowing.
 */
@QuarkusTest
@TestProfile(WorkerFaultsTest.Profile.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WorkerFaultsTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.attempt.deadlines.\"scripted\"", "1500ms",
                    "poison-guard.attempt.stop-grace", "1s");
        }
    }

    @Inject
    ScriptedHandler handler;
    @Inject
    io.poisonguard.pipeline.SystemicGuard guard;

    private void send(String jobId, String script) {
        new Queues(sqs, names).send(script, ScriptedHandler.attributes(jobId));
    }

    @Test
    @Order(0)
    void aHandlerFailureWhoseCausesFormACycleIsClassifiedAndEndsItsAttempt() {
        send("cyclic-1", "cyclic");

        await().atMost(Duration.ofSeconds(20)).until(() -> quarantine.find(key("cyclic-1")).isPresent());
        LedgerRecord r = ledger.find(key("cyclic-1")).orElseThrow();
        assertEquals(FailureClass.PERMANENT, r.quarantineClass(), r.history().toString());
        assertTrue(r.history().stream().allMatch(e -> e.outcome() == AttemptOutcome.FAILED), r.history().toString());
        await().atMost(Duration.ofSeconds(5)).until(() -> handler.running() == 0);
        management().get("/q/health/live").then().statusCode(200);
    }

    @Test
    @Order(10)
    void aHungHandlerIsInterruptedAtItsDeadlineAndQuarantinedAsTimeoutWhileHealthyJobsKeepFlowing() {
        send("hung-1", "hang");
        List<String> healthy = IntStream.range(0, 20).mapToObj(i -> "beside-hung-" + i).toList();
        healthy.forEach(id -> send(id, "ok"));

        await().atMost(Duration.ofSeconds(20)).until(() -> healthy.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
        await().atMost(Duration.ofSeconds(40)).until(() -> quarantine.find(key("hung-1")).isPresent());

        LedgerRecord r = ledger.find(key("hung-1")).orElseThrow();
        assertEquals(JobState.QUARANTINED, r.state());
        assertEquals(FailureClass.TIMEOUT, r.quarantineClass());
        assertEquals(3, r.failuresOf(FailureClass.TIMEOUT), "TIMEOUT's own limit");
        assertEquals(3, handler.calls("hung-1"), "one handler run per attempt, none in parallel");
        for (AttemptEntry e : r.history()) {
            assertEquals(AttemptOutcome.TIMED_OUT, e.outcome());
            Duration ran = Duration.between(e.startedAt(), e.endedAt());
            assertTrue(ran.compareTo(Duration.ofMillis(1500)) >= 0 && ran.compareTo(Duration.ofSeconds(5)) < 0,
                    "attempt " + e.number() + " ended at its 1.5 s deadline, ran " + ran);
        }
        assertNull(r.leaseOwner(), "no lease is left for an attempt nobody runs");
        assertEquals(FailureClass.TIMEOUT, quarantine.find(key("hung-1")).map(QuarantineRecord::failureClass).orElseThrow());
        await().atMost(Duration.ofSeconds(5)).until(() -> handler.running() == 0);
        management().get("/q/health/live").then().statusCode(200);
    }

    /**
     * A handler that returns a moment before its deadline has its deferred effect (its notice) run to the end: the effects get
     * a grace after the handler returned, so one on its way is not cut at the handler's deadline (sent, unrecorded, and sent
     * again by the next attempt).
     */
    @Test
    @Order(20)
    void aDeferredEffectOfAHandlerThatReturnedJustBeforeItsDeadlineRunsToTheEnd() {
        send("deferred-slow-1", "deferred-slow");

        await().atMost(Duration.ofSeconds(20)).until(() -> state("deferred-slow-1") == JobState.SUCCEEDED);
        LedgerRecord r = ledger.find(key("deferred-slow-1")).orElseThrow();
        assertEquals(1, r.attempt(), "the first attempt succeeded: " + r.history());
        assertEquals(Map.of(ScriptedHandler.DEFERRED_EFFECT, 1), r.effects(), "its effect recorded by it");
    }

    /**
     * A handler that succeeded deferred an effect (its notice) that then hung: the effects deferred to a success had no
     * deadline. The attempt never ended, its heartbeat stopped at the deadline, and its lease lapsed into a crash charged to
     * the job while the hung effect still held the job's thread and slot. The attempt's deadline (or a grace after the
     * handler returned, if later) covers its deferred effects: one still running then is interrupted and the attempt ends
     * TIMED_OUT.
     */
    @Test
    @Order(25)
    void aDeferredEffectThatHangsEndsItsAttemptAtTheDeadlineAsATimeout() {
        send("deferred-hang-1", "deferred-hang");

        // The effects get the attempt's deadline (1.5 s here) or AttemptStage.DEFERRED_GRACE (10 s) after the handler returned.
        await().atMost(Duration.ofSeconds(25)).until(() -> ledger.find(key("deferred-hang-1"))
                .map(r -> !r.history().isEmpty() && r.history().get(0).outcome() != AttemptOutcome.RUNNING).orElse(false));
        LedgerRecord r = ledger.find(key("deferred-hang-1")).orElseThrow();
        assertEquals(AttemptOutcome.TIMED_OUT, r.history().get(0).outcome(), r.history().toString());
        assertEquals(0, r.failuresOf(FailureClass.CRASH) + r.failuresOf(FailureClass.CRASH_AMBIGUOUS), r.failures().toString());
        assertTrue(!Integer.valueOf(1).equals(r.effects().get(ScriptedHandler.DEFERRED_EFFECT)),
                "the hung effect was not recorded as performed by the attempt it hung in: " + r.effects());
        // The next attempt's effect returns: the job completes, its effect recorded once.
        await().atMost(Duration.ofSeconds(30)).until(() -> state("deferred-hang-1") == JobState.SUCCEEDED);
    }

    @Test
    @Order(30)
    void aHandlerThatThrowsOutOfMemoryErrorEndsItsAttemptAsACrashAndIsQuarantinedAsCrash() {
        send("oom-1", "error");
        send("after-oom", "ok");

        await().atMost(Duration.ofSeconds(40)).until(() -> quarantine.find(key("oom-1")).isPresent());
        LedgerRecord r = ledger.find(key("oom-1")).orElseThrow();
        assertEquals(JobState.QUARANTINED, r.state());
        assertEquals(FailureClass.CRASH, r.quarantineClass(), "an error the JVM may not survive counts as a crash of the job");
        assertEquals(3, r.failuresOf(FailureClass.CRASH));
        assertTrue(r.history().stream().allMatch(e -> e.outcome() == AttemptOutcome.CRASHED), r.history().toString());
        assertTrue(r.history().stream().allMatch(e -> "OutOfMemoryError".equals(e.errorType())), r.history().toString());
        assertEquals(r.attempt(), handler.calls("oom-1"), "every attempt ran the handler once; none was left running");
        assertEquals(JobState.SUCCEEDED, state("after-oom"));
        // The process may be damaged: it asks its orchestrator to replace it.
        management().get("/q/health/live").then().statusCode(503).body(containsString("OutOfMemoryError"));
    }

    @Test
    @Order(40)
    void aHandlerThatIgnoresItsInterruptIsChargedATimeoutAndMarksTheWorkerNotLive() {
        send("stuck-1", "hang-hard");
        await().atMost(Duration.ofSeconds(20)).until(() -> ledger.find(key("stuck-1"))
                .map(r -> r.failuresOf(FailureClass.TIMEOUT) >= 1).orElse(false));
        await().atMost(Duration.ofSeconds(10)).until(() -> management().get("/q/health/live").then().extract().asString()
                .contains("did not stop after its interrupt"));
        // The liveness probe answers anyone who reaches the management port: it says what happened, not whose job it was.
        management().get("/q/health/live").then().statusCode(503).body(containsString("job withheld"))
                .body(org.hamcrest.Matchers.not(containsString("stuck-1")));
        // An operator's token of every tenant is told the job.
        given().auth().oauth2(io.poisonguard.testing.Tokens.of("vera", "viewer")).get("/ops/consumption").then().statusCode(200)
                .body("worker", containsString("stuck-1"));
        // Its thread still runs: the job's next attempt must not start beside it (two runs of one job at once) while the
        // orchestrator replaces the worker. It waits at least a visibility timeout (5 s here), not the ladder's 300 ms.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() -> handler.calls("stuck-1") == 1);
        // Once the handler lets go, the job's next attempt runs to completion; the timeout stays counted.
        handler.releaseStuck();
        await().atMost(Duration.ofSeconds(40)).until(() -> state("stuck-1") == JobState.SUCCEEDED);
        LedgerRecord r = ledger.find(key("stuck-1")).orElseThrow();
        assertEquals(AttemptOutcome.TIMED_OUT, r.history().get(0).outcome());
        assertTrue(r.failuresOf(FailureClass.TIMEOUT) >= 1, r.failures().toString());
    }

    /**
     * A handler caught in a loop on the CPU (a parser and the input that sends it round forever) ignores its interrupt and
     * never blocks. Handlers ran on virtual threads, which are not preempted: as many such handlers as the JVM has carrier
     * threads (one per core by default) took every carrier, and every other job's intake, outcome and lease renewal, all
     * on virtual threads too, stopped with them. Handlers now run on platform threads, which the OS shares out.
     */
    @Test
    @Order(45)
    void handlersSpinningOnTheCpuAsManyAsTheCarriersDoNotStopTheOtherJobs() {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        List<String> spinners = IntStream.range(0, carriers).mapToObj(i -> "spin-" + i).toList();
        List<String> healthy = IntStream.range(0, 10).mapToObj(i -> "beside-spin-" + i).toList();
        try {
            spinners.forEach(id -> send(id, "spin"));
            await().atMost(Duration.ofSeconds(20)).until(() -> handler.spinning() == carriers);
            healthy.forEach(id -> send(id, "ok"));

            await().atMost(Duration.ofSeconds(30)).until(() -> healthy.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
            // The spinners' attempts are cut at their deadline and charged a timeout, though their threads still spin.
            await().atMost(Duration.ofSeconds(20)).until(() -> spinners.stream().allMatch(id -> ledger.find(key(id))
                    .map(r -> r.failuresOf(FailureClass.TIMEOUT) >= 1).orElse(false)));
        } finally {
            handler.releaseSpinners();
        }
        await().atMost(Duration.ofSeconds(40)).until(() -> spinners.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
    }

    /**
     * A handler's deferred effects run on its job's virtual thread. As many of them spinning on the CPU as the JVM has
     * carriers (one, in the shipped images) hold every carrier: no job in the worker moves, and nothing on those threads
     * can notice. Liveness said UP for as long as it lasted. The carrier watch, on a platform thread, now finds the
     * worker's virtual threads not running and liveness goes DOWN, so the orchestrator replaces the process.
     */
    @Test
    @Order(46)
    void deferredEffectsSpinningOnEveryCarrierMakeTheWorkerNotLive() {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        List<String> spinners = IntStream.range(0, carriers).mapToObj(i -> "deferred-spin-" + i).toList();
        try {
            spinners.forEach(id -> send(id, "deferred-spin"));
            await().atMost(Duration.ofSeconds(20)).until(() -> handler.deferredSpinning() == carriers);

            await().atMost(Duration.ofSeconds(30)).until(() -> management().get("/q/health/live").then().extract().asString()
                    .contains("virtual threads did not run"));
            management().get("/q/health/live").then().statusCode(503);
        } finally {
            handler.releaseDeferredSpinners();
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> spinners.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));
    }

    /**
     * A bad deploy (a heap too small for the work, a leak) makes every job end with OutOfMemoryError. Those crashes went
     * straight to the crash limits, past the systemic guard, so the whole backlog was quarantined, one alert a job. Now a
     * row of the same crash trips the guard as a row of the same failure does, and the crashes after it are held.
     */
    @Test
    @Order(50)
    void aBadDeployWhereEveryJobRunsOutOfMemoryTripsTheSystemicGuardInsteadOfQuarantiningTheBacklog() {
        List<String> jobs = IntStream.range(0, 16).mapToObj(i -> "deploy-oom-" + i).toList();
        jobs.forEach(id -> send(id, "error"));

        await().atMost(Duration.ofSeconds(40)).until(() -> guard.trip().isPresent());
        assertTrue(guard.trip().toString().contains("OutOfMemoryError"), guard.trip().toString());
        await().atMost(Duration.ofSeconds(20)).until(() -> jobs.stream().anyMatch(id -> ledger.find(key(id))
                .map(r -> r.history().stream().anyMatch(e -> e.outcome() == AttemptOutcome.HELD)).orElse(false)));
        long quarantined = jobs.stream().filter(id -> quarantine.find(key(id)).isPresent()).count();
        assertTrue(quarantined <= 4, "at most same-signature - 1 jobs quarantined before the guard tripped, was " + quarantined);
    }
}

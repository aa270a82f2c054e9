package io.poisonguard.crash;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.dynamodb.DynamoQuarantineStore;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ServiceProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Invariant 1 with real processes: the attempt is written before the handler runs, so a worker
 * killed mid-attempt still counts it. A crash-inducing job costs exactly the CRASH limit in worker
 * deaths, then is quarantined; the healthy jobs around it all complete; nothing is lost.
 */
class CrashSurvivalIT {
    static final int HEALTHY = 12;

    Emulators emulators;
    SqsClient sqs;
    DynamoDbClient dynamo;
    Names names;
    Queues queues;
    DynamoLedgerStore ledger;
    DynamoQuarantineStore quarantine;
    ServiceProcess service;
    Path logs;

    @BeforeEach
    void setUp() throws Exception {
        emulators = Emulators.shared();
        sqs = EmulatorClients.sqs(emulators);
        dynamo = EmulatorClients.dynamo(emulators);
        names = new Names("crash" + UUID.randomUUID().toString().substring(0, 6));
        queues = new Queues(sqs, names);
        ledger = new DynamoLedgerStore(dynamo, names.ledgerTable(), Clock.systemUTC());
        quarantine = new DynamoQuarantineStore(dynamo, names.quarantineTable(), Clock.systemUTC());
        logs = Files.createDirectories(Path.of("target", "crash-logs"));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (service != null) {
            service.stop();
        }
        sqs.close();
        dynamo.close();
    }

    private ServiceProcess service(String fault) {
        Map<String, String> overrides = ServiceProcess.fastCrashSettings(names.prefix(), 1);
        overrides.put("poison-guard.example.provider.faults.P-CRASH", fault);
        return new ServiceProcess(names.prefix(), emulators, overrides, logs);
    }

    @Test
    void aWorkerKilledWithSigkillMidAttemptStillCountsItAndTheJobIsQuarantinedAfterThreeKills() throws Exception {
        service = service("hang:120s");
        service.start();
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> queues.url(names.jobsQueue()) != null);
        List<String> healthy = sendJobs();

        AtomicInteger kills = new AtomicInteger();
        Instant deadline = Instant.now().plus(Duration.ofMinutes(4));
        while (state("crash-me") != JobState.QUARANTINED) {
            assertTrue(Instant.now().isBefore(deadline), "the crash job was not quarantined in time; kills so far: " + kills);
            int killsSoFar = kills.get();
            // Kill only once the ledger shows the attempt that this process is running.
            await().atMost(Duration.ofSeconds(60)).until(() -> attemptRunning("crash-me", killsSoFar + 1) || state("crash-me") == JobState.QUARANTINED);
            if (state("crash-me") == JobState.QUARANTINED) {
                break;
            }
            service.kill();
            kills.incrementAndGet();
            service.start();
        }
        assertOutcome(healthy, kills.get(), "SIGKILL");
    }

    @Test
    void aJobThatHaltsTheJvmIsQuarantinedAsACrashAfterThreeDeaths() throws Exception {
        service = service("halt");
        service.start();
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> queues.url(names.jobsQueue()) != null);
        List<String> healthy = sendJobs();

        int deaths = 0;
        Instant deadline = Instant.now().plus(Duration.ofMinutes(4));
        while (state("crash-me") != JobState.QUARANTINED) {
            assertTrue(Instant.now().isBefore(deadline), "the crash job was not quarantined in time; deaths so far: " + deaths);
            await().atMost(Duration.ofSeconds(60)).until(() -> !service.alive() || state("crash-me") == JobState.QUARANTINED);
            if (!service.alive()) {
                assertEquals(137, service.exitCode(), "the JVM halted itself");
                deaths++;
                service.start();
            }
        }
        assertOutcome(healthy, deaths, "halt");
    }

    @Test
    void aGracefulShutdownFinishesTheRunningJobAndLosesNothing() throws Exception {
        service = service("hang:10s");
        service.start();
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> queues.url(names.jobsQueue()) != null);
        queues.send(Queues.permitV3("P-CRASH"), Queues.permitAttributes("finish-me", "tenant-x", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> attemptRunning("finish-me", 1));
        // ACTIVE is written at the intake, before the copy takes its handler slot: a SIGTERM in between gives the attempt
        // back unstarted (ABANDONED, RETRY_WAIT), which is right, but is not the case under test. Only a handler that runs
        // has its lease renewed by the heartbeat (every second here), so a newer version of the record says it started.
        long intakeVersion = ledger.find(new JobKey("tenant-x", "finish-me")).orElseThrow().version();
        await().atMost(Duration.ofSeconds(8)).until(() -> ledger.find(new JobKey("tenant-x", "finish-me"))
                .map(r -> r.state() == JobState.ACTIVE && r.attempt() == 1 && r.version() > intakeVersion).orElse(false));

        service.stop();
        assertTrue(service.exitCode() != 137, "SIGTERM: an orderly exit, not a kill (exit " + service.exitCode() + ")");
        assertEquals(JobState.SUCCEEDED, state("finish-me"), "the running job finished inside the shutdown grace");
        assertEquals(1, ledger.find(new JobKey("tenant-x", "finish-me")).orElseThrow().attempt());
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0);
        assertEquals(1, queues.drain(names.noticesQueue()).size(), "its notice was sent once");
    }

    @Test
    void threeDeploysDuringALongJobAreNotChargedToItAndItCompletesAfterwards() throws Exception {
        Map<String, String> overrides = ServiceProcess.fastCrashSettings(names.prefix(), 1);
        overrides.put("poison-guard.consumer.shutdown-grace", "1s");
        overrides.put("poison-guard.example.provider.faults.P-LONG", "hang:60s");
        service = new ServiceProcess(names.prefix(), emulators, overrides, logs);
        service.start();
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> queues.url(names.jobsQueue()) != null);
        queues.send(Queues.permitV3("P-LONG"), Queues.permitAttributes("long-1", "tenant-x", 3));

        for (int deploy = 1; deploy <= 3; deploy++) {
            int attempt = deploy;
            await().atMost(Duration.ofSeconds(60)).until(() -> attemptRunning("long-1", attempt));
            service.stop();
            assertTrue(service.exitCode() != 137, "SIGTERM: an orderly exit (exit " + service.exitCode() + ")");
            LedgerRecord r = ledger.find(new JobKey("tenant-x", "long-1")).orElseThrow();
            assertEquals(AttemptOutcome.ABANDONED, r.currentEntry().outcome(), "deploy " + deploy + ": the attempt was given back: " + r.history());
            assertTrue(r.failures().isEmpty(), "deploy " + deploy + ": a shutdown is not the job's fault: " + r.failures());
            assertEquals(null, r.leaseOwner(), "no lease left for an attempt nobody runs");
            service.start();
        }
        // The release that finishes in time: the same job, no longer slower than the deploys.
        await().atMost(Duration.ofSeconds(60)).until(() -> attemptRunning("long-1", 4));
        service.stop();
        overrides.remove("poison-guard.example.provider.faults.P-LONG");
        service = new ServiceProcess(names.prefix() + "-fixed", emulators, overrides, logs);
        service.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> state("long-1") == JobState.SUCCEEDED);
        LedgerRecord done = ledger.find(new JobKey("tenant-x", "long-1")).orElseThrow();
        assertTrue(done.failures().isEmpty(), "nothing was charged: " + done.failures());
        assertEquals(4, done.history().stream().filter(e -> e.outcome() == AttemptOutcome.ABANDONED).count(), done.history().toString());
        assertEquals(1, queues.drain(names.noticesQueue()).size(), "one notice");
        System.out.printf("%n[deploys] 4 shutdowns during one long job: %d attempts, all ABANDONED but the last, failures %s, SUCCEEDED%n",
                done.attempt(), done.failures());
    }

    private List<String> sendJobs() {
        List<String> healthy = new ArrayList<>();
        queues.send(Queues.permitV3("P-CRASH"), Queues.permitAttributes("crash-me", "tenant-x", 3));
        // The healthy jobs go once the crash job's first attempt has started: it came into an empty lane, so it ran
        // alone and its death is its own (CRASH). Had a healthy copy been in the lane already (prefetched, or writing
        // its outcome), the first death would be ambiguous for both, and the crash job's CRASH count would start at
        // its second death, when it runs alone as a suspect.
        await().atMost(Duration.ofSeconds(60)).until(() -> state("crash-me") != null);
        for (int i = 0; i < HEALTHY; i++) {
            String id = "healthy-" + i;
            healthy.add(id);
            queues.send(Queues.permitV3("P-H" + i), Queues.permitAttributes(id, "tenant-x", 3));
        }
        return healthy;
    }

    private void assertOutcome(List<String> healthy, int deaths, String how) {
        assertEquals(3, deaths, "the CRASH limit (3) bounds the worker deaths");
        await().atMost(Duration.ofSeconds(90)).until(() -> healthy.stream().allMatch(id -> state(id) == JobState.SUCCEEDED));

        LedgerRecord crash = ledger.find(new JobKey("tenant-x", "crash-me")).orElseThrow();
        assertEquals(FailureClass.CRASH, crash.quarantineClass());
        assertEquals(3, crash.attempt(), "three attempts started, each written before the handler ran");
        assertEquals(3, crash.failuresOf(FailureClass.CRASH));
        List<AttemptEntry> crashed = crash.history().stream().filter(e -> e.outcome() == AttemptOutcome.CRASHED).toList();
        assertEquals(3, crashed.size(), "each killed attempt is recorded as CRASHED: " + crash.history());
        // The ledger says QUARANTINED before the quarantine's steps (DLQ copy, then record) are done.
        QuarantineRecord q = await().atMost(Duration.ofSeconds(60))
                .until(() -> quarantine.find(new JobKey("tenant-x", "crash-me")), java.util.Optional::isPresent).orElseThrow();
        assertEquals(FailureClass.CRASH, q.failureClass());

        List<Message> dead = queues.drain(names.deadLetterQueue());
        assertEquals(List.of("crash-me"), dead.stream().map(m -> Queues.attr(m, "job-id")).distinct().toList());
        assertEquals("CRASH", Queues.attr(dead.get(0), "failure-class"));
        List<Message> notices = queues.drain(names.noticesQueue());
        assertEquals(java.util.Set.copyOf(healthy), notices.stream().map(m -> Queues.attr(m, "job-id")).collect(Collectors.toSet()),
                "every healthy job completed and sent its notice");
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0);
        System.out.printf("%n[crash/%s] %d worker deaths, crash-me quarantined as %s after %d attempts (%s); %d healthy jobs completed%n",
                how, deaths, q.failureClass(), q.attempts(), q.reason(), healthy.size());
    }

    private boolean attemptRunning(String jobId, int attempt) {
        return ledger.find(new JobKey("tenant-x", jobId)).map(r -> r.state() == JobState.ACTIVE && r.attempt() == attempt).orElse(false);
    }

    private JobState state(String jobId) {
        return ledger.find(new JobKey("tenant-x", jobId)).map(LedgerRecord::state).orElse(null);
    }
}

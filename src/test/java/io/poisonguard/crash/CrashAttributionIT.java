package io.poisonguard.crash;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.dynamodb.DynamoQuarantineStore;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ServiceProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 5: three worker JVMs at concurrency 8, healthy jobs and two jobs that halt the JVM. With
 * crash attribution the culprits are quarantined as CRASH and no healthy job is; without it, the
 * batch-mates in flight at each crash pay too. Both runs are printed side by side.
 */
class CrashAttributionIT {
    static final int WORKERS = 3;
    static final int BASELINE = 100;
    static final int MIXED = 400;
    static final int AFTER = 100;
    static final Set<String> CULPRITS = Set.of("culprit-1", "culprit-2");
    static final Map<Boolean, Result> RESULTS = new HashMap<>();

    record Result(int deaths, int culpritsCrash, int innocentsQuarantined, int innocentsCharged, long firstCrashToQuarantineMs,
                  double baselinePerSecond, double afterPerSecond, int healthySucceeded, int healthyTotal) {
    }

    /** What the test reads of one ledger item: its state and how many CRASH failures it was charged. */
    record Entry(String state, int crashes) {
    }

    static Emulators emulators;
    static SqsClient sqs;
    static DynamoDbClient dynamo;

    @BeforeAll
    static void clients() {
        emulators = Emulators.shared();
        sqs = EmulatorClients.sqs(emulators);
        dynamo = EmulatorClients.dynamo(emulators);
    }

    @AfterAll
    static void report() {
        System.out.println("\n[crash attribution] 3 workers x concurrency 8, " + (BASELINE + MIXED + AFTER) + " healthy jobs, 2 that halt the JVM");
        System.out.printf("[crash attribution] %-34s %12s %12s%n", "", "attribution", "without");
        Result on = RESULTS.get(true);
        Result off = RESULTS.get(false);
        if (on == null || off == null) {
            return;
        }
        row("worker deaths", on.deaths(), off.deaths());
        row("culprits quarantined as CRASH", on.culpritsCrash(), off.culpritsCrash());
        row("healthy jobs quarantined", on.innocentsQuarantined(), off.innocentsQuarantined());
        row("healthy jobs charged a CRASH", on.innocentsCharged(), off.innocentsCharged());
        row("healthy jobs succeeded", on.healthySucceeded(), off.healthySucceeded());
        row("first crash -> culprits quarantined (ms)", on.firstCrashToQuarantineMs(), off.firstCrashToQuarantineMs());
        System.out.printf("[crash attribution] %-34s %12.1f %12.1f%n", "healthy jobs/s before crashes", on.baselinePerSecond(), off.baselinePerSecond());
        System.out.printf("[crash attribution] %-34s %12.1f %12.1f%n", "healthy jobs/s after quarantine", on.afterPerSecond(), off.afterPerSecond());
        sqs.close();
        dynamo.close();
    }

    private static void awaitAllReady(List<ServiceProcess> workers) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> workers.stream().allMatch(ServiceProcess::ready));
    }

    private static void row(String label, long a, long b) {
        System.out.printf("[crash attribution] %-34s %12d %12d%n", label, a, b);
    }

    @Test
    void withAttributionOnlyTheCulpritsAreQuarantinedAndEveryHealthyJobCompletes() throws Exception {
        Result r = run(true);
        assertEquals(2, r.culpritsCrash(), "both culprits quarantined as CRASH");
        assertEquals(0, r.innocentsQuarantined(), "no healthy job quarantined");
        assertEquals(0, r.innocentsCharged(), "no healthy job was charged an attributable CRASH");
        assertEquals(r.healthyTotal(), r.healthySucceeded(), "every healthy job completed");
        assertTrue(r.afterPerSecond() >= r.baselinePerSecond() * 0.5,
                "throughput recovers after the quarantine: " + r.afterPerSecond() + " vs " + r.baselinePerSecond() + " jobs/s");
    }

    @Test
    void withoutAttributionTheBatchMatesOfACrashPayForIt() throws Exception {
        Result r = run(false);
        assertEquals(2, r.culpritsCrash(), "the culprits are still bounded");
        assertEquals(r.healthyTotal(), r.healthySucceeded() + r.innocentsQuarantined(), "nothing is lost, whatever the blame");
        assertTrue(r.innocentsCharged() > 0, "without attribution, the healthy jobs in flight at a crash are charged a CRASH each");
    }

    private Result run(boolean attribution) throws Exception {
        Names names = new Names("attr" + (attribution ? "on" : "off") + UUID.randomUUID().toString().substring(0, 4));
        Queues queues = new Queues(sqs, names);
        Path logs = Files.createDirectories(Path.of("target", "crash-logs"));
        List<ServiceProcess> workers = new ArrayList<>();
        for (int i = 1; i <= WORKERS; i++) {
            Map<String, String> o = ServiceProcess.fastCrashSettings(names.prefix(), 8);
            o.put("poison-guard.worker-id", names.prefix() + "-w" + i);
            o.put("poison-guard.failure.crash-attribution", Boolean.toString(attribution));
            o.put("poison-guard.example.provider.rate", "500");
            o.put("poison-guard.example.provider.faults.P-culprit-1", "halt");
            o.put("poison-guard.example.provider.faults.P-culprit-2", "halt");
            workers.add(new ServiceProcess(names.prefix() + "-w" + i, emulators, o, logs));
        }
        try {
            workers.get(0).start();
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> queues.url(names.jobsQueue()) != null
                    && dynamo.describeTable(b -> b.tableName(names.ledgerTable())) != null);
            for (ServiceProcess w : workers.subList(1, WORKERS)) {
                w.start();
            }

            // Both rates are measured with every worker booted: a worker still starting (its JVM takes seconds on two cores,
            // beside the others' work) made one phase's rate a measure of the boot, not of the consumption.
            awaitAllReady(workers);
            List<String> baseline = ids("base", BASELINE);
            Instant t0 = Instant.now();
            send(queues, names, baseline.stream().map(id -> Map.entry(id, "P-" + id)).toList());
            await().atMost(Duration.ofSeconds(120)).until(() -> count(names, baseline, "SUCCEEDED") == BASELINE);
            double baselineRate = BASELINE / secondsSince(t0);

            List<String> mixed = ids("mixed", MIXED);
            List<Map.Entry<String, String>> wave = new ArrayList<>();
            for (int i = 0; i < MIXED; i++) {
                wave.add(Map.entry(mixed.get(i), "P-" + mixed.get(i)));
                if (i == 40 || i == 200) {
                    String culprit = i == 40 ? "culprit-1" : "culprit-2";
                    wave.add(Map.entry(culprit, "P-" + culprit));
                }
            }
            send(queues, names, wave);

            AtomicInteger deaths = new AtomicInteger();
            AtomicReference<Instant> firstCrash = new AtomicReference<>();
            List<String> all = new ArrayList<>(mixed);
            all.addAll(CULPRITS);
            DynamoQuarantineStore quarantine = new DynamoQuarantineStore(dynamo, names.quarantineTable(), Clock.systemUTC());
            // Workers are restarted as they die, like an orchestrator would, until every job has an outcome.
            // The ledger says QUARANTINED before the dead-letter copy and the record are written (so no
            // copy runs meanwhile): wait for the records as well, since they are read next.
            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(500)).until(() -> {
                for (ServiceProcess w : workers) {
                    if (!w.alive()) {
                        assertEquals(137, w.exitCode(), "a worker died other than by a culprit's halt");
                        deaths.incrementAndGet();
                        firstCrash.compareAndSet(null, Instant.now());
                        w.start();
                    }
                }
                return terminal(names, all) == all.size() && CULPRITS.stream().allMatch(id -> quarantine.find(new JobKey("tenant-c", id)).isPresent());
            });
            Instant culpritsOut = CULPRITS.stream().map(id -> quarantine.find(new JobKey("tenant-c", id)).map(QuarantineRecord::quarantinedAt).orElseThrow())
                    .max(Instant::compareTo).orElseThrow();
            int culpritsCrash = (int) CULPRITS.stream().filter(id -> quarantine.find(new JobKey("tenant-c", id)).map(q -> q.failureClass() == FailureClass.CRASH)
                    .orElse(false)).count();

            // The last culprit's halt restarts its worker as the jobs settle: the rate after the quarantine starts once it is up.
            awaitAllReady(workers);
            List<String> after = ids("after", AFTER);
            Instant t1 = Instant.now();
            send(queues, names, after.stream().map(id -> Map.entry(id, "P-" + id)).toList());
            await().atMost(Duration.ofSeconds(120)).until(() -> count(names, after, "SUCCEEDED") == AFTER);
            double afterRate = AFTER / secondsSince(t1);

            List<String> healthy = new ArrayList<>(baseline);
            healthy.addAll(mixed);
            healthy.addAll(after);
            Map<String, Entry> ledger = entries(names);
            int succeeded = (int) healthy.stream().filter(id -> ledger.containsKey(id) && "SUCCEEDED".equals(ledger.get(id).state())).count();
            int innocents = (int) healthy.stream().filter(id -> ledger.containsKey(id) && "QUARANTINED".equals(ledger.get(id).state())).count();
            int charged = (int) healthy.stream().filter(id -> ledger.containsKey(id) && ledger.get(id).crashes() > 0).count();
            Result r = new Result(deaths.get(), culpritsCrash, innocents, charged,
                    firstCrash.get() == null ? -1 : Duration.between(firstCrash.get(), culpritsOut).toMillis(),
                    baselineRate, afterRate, succeeded, healthy.size());
            RESULTS.put(attribution, r);
            return r;
        } finally {
            for (ServiceProcess w : workers) {
                w.stop();
            }
        }
    }

    private static double secondsSince(Instant t) {
        return Math.max(0.001, Duration.between(t, Instant.now()).toMillis() / 1000.0);
    }

    private static List<String> ids(String prefix, int n) {
        return IntStream.range(0, n).mapToObj(i -> prefix + "-" + i).toList();
    }

    private static void send(Queues queues, Names names, List<Map.Entry<String, String>> jobs) {
        String url = queues.url(names.jobsQueue());
        for (int i = 0; i < jobs.size(); i += 10) {
            List<SendMessageBatchRequestEntry> batch = new ArrayList<>();
            for (Map.Entry<String, String> job : jobs.subList(i, Math.min(jobs.size(), i + 10))) {
                batch.add(SendMessageBatchRequestEntry.builder().id("m" + batch.size()).messageBody(Queues.permitV3(job.getValue()))
                        .messageAttributes(Queues.sdk(Queues.permitAttributes(job.getKey(), "tenant-c", 3))).build());
            }
            sqs.sendMessageBatch(b -> b.queueUrl(url).entries(batch));
        }
    }

    /** State and CRASH count of every job in the ledger table, by scan (one pass, instead of a read per job). */
    private static Map<String, Entry> entries(Names names) {
        Map<String, Entry> out = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            // Whole items, read through the store's decoding: a compact item keeps its state inside one attribute.
            ScanResponse page = dynamo.scan(b -> b.tableName(names.ledgerTable()).consistentRead(true).exclusiveStartKey(from));
            page.items().forEach(i -> {
                LedgerRecord r = DynamoLedgerStore.decode(i);
                out.put(r.jobId(), new Entry(r.state() == null ? "" : r.state().name(), r.failuresOf(FailureClass.CRASH)));
            });
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }

    private static int count(Names names, List<String> ids, String state) {
        Map<String, Entry> s = entries(names);
        return (int) ids.stream().filter(id -> s.containsKey(id) && state.equals(s.get(id).state())).count();
    }

    private static int terminal(Names names, List<String> ids) {
        Map<String, Entry> s = entries(names);
        return (int) ids.stream().map(s::get)
                .filter(e -> e != null && ("SUCCEEDED".equals(e.state()) || "QUARANTINED".equals(e.state()))).count();
    }
}

package io.poisonguard.bench;

import io.poisonguard.config.Names;
import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.dynamodb.TableBootstrap;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What one healthy job's two ledger writes cost the DynamoDB client in CPU, set apart from everything else the
 * pipeline does: the idempotent-naive baseline's two calls (a two-attribute conditional put, a one-attribute
 * update), poison-guard's ledger ({@link DynamoLedgerStore}: the conditional create of a started attempt, then the
 * conditional put of the succeeded item with its effect and expiry), the ledger's calls made from virtual threads
 * (as the worker makes them), and from a client with the SDK's per-call timeouts (the worker's
 * {@code api-call-attempt-timeout} and {@code api-call-timeout}, here on the SDK's own timer threads). One JVM, one
 * dynalite, every shape in windows of {@code sdk-cost.jobs} jobs at {@code sdk-cost.concurrency}, round by round
 * in turn; a window's cost is the whole process's CPU over it (client threads, timer threads, GC) per job.
 * Runs through {@code scripts/sdk-cost.sh}; prints a table and a verdict, PASS when the ledger's two writes cost
 * the client at most {@link #LIMIT} times the baseline's.
 */
class SdkCostIT {
    /**
     * The ledger's writes may cost the client up to this many times the baseline's two small calls: they carry the
     * attempt's bookkeeping (about a dozen attributes, the history entry, the write token), which costs a fifth more
     * (1.21 on 2026-12-03); an encoding that costs half again as much is a regression (one map per history entry did).
     */
    static final double LIMIT = 1.5;
    private static final String IDEMPOTENT = "idempotent-naive's two calls";
    private static final String LEDGER = "the ledger's two writes";
    private static final String VIRTUAL = "the ledger's, from virtual threads";
    private static final String TIMED = "the ledger's, with the SDK's per-call timeouts";

    @Test
    void theLedgersWritesAgainstTheBaselines() throws Exception {
        int jobs = Integer.getInteger("sdk-cost.jobs", 3000);
        int rounds = Integer.getInteger("sdk-cost.rounds", 6);
        int concurrency = Integer.getInteger("sdk-cost.concurrency", 8);
        Emulators emulators = Emulators.shared();
        Names names = new Names("sc" + UUID.randomUUID().toString().substring(0, 6));
        try (DynamoDbClient plain = client(emulators, false); DynamoDbClient timed = client(emulators, true)) {
            new TableBootstrap(plain, names).ensureTables();
            String table = names.prefix() + "-idempotency";
            plain.createTable(b -> b.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                    .keySchema(KeySchemaElement.builder().attributeName("jobId").keyType(KeyType.HASH).build())
                    .attributeDefinitions(AttributeDefinition.builder().attributeName("jobId").attributeType(ScalarAttributeType.S).build()));
            plain.waiter().waitUntilTableExists(b -> b.tableName(table));
            DynamoLedgerStore ledger = new DynamoLedgerStore(plain, names.ledgerTable(), Clock.systemUTC());
            DynamoLedgerStore timedLedger = new DynamoLedgerStore(timed, names.ledgerTable(), Clock.systemUTC());

            Map<String, Shape> shapes = new LinkedHashMap<>();
            shapes.put(IDEMPOTENT, new Shape(id -> idempotent(plain, table, id), false));
            shapes.put(LEDGER, new Shape(id -> ledgerJob(ledger, id), false));
            shapes.put(VIRTUAL, new Shape(id -> ledgerJob(ledger, id), true));
            shapes.put(TIMED, new Shape(id -> ledgerJob(timedLedger, id), false));

            // Unmeasured: the JIT compiles every shape's path before any window counts (two passes: one left the first
            // round's windows a third dearer than the rest).
            List<String> order = new ArrayList<>(shapes.keySet());
            for (int pass = 0; pass < 2; pass++) {
                for (String name : order) {
                    window(shapes.get(name), 2 * jobs, concurrency, "w" + pass + "-" + order.indexOf(name) + "-");
                }
            }
            Map<String, List<Double>> cost = new LinkedHashMap<>();
            for (int r = 0; r < rounds; r++) {
                // Every other round in reverse, so no shape always follows the same one.
                List<String> now = new ArrayList<>(order);
                if (r % 2 == 1) {
                    java.util.Collections.reverse(now);
                }
                for (String name : now) {
                    cost.computeIfAbsent(name, k -> new ArrayList<>()).add(window(shapes.get(name), jobs, concurrency, "r" + r + "-" + order.indexOf(name) + "-"));
                }
            }
            String report = report(cost, jobs, rounds, concurrency);
            System.out.print(report);
            Path out = Files.createDirectories(Path.of("target", "sdk-cost")).resolve("report.txt");
            Files.writeString(out, report, StandardCharsets.UTF_8);
            assertEquals(rounds, cost.get(LEDGER).size(), "every round measured every shape");
        }
    }

    /** One way of making a job's two writes, and whether its threads are virtual. */
    private record Shape(Consumer<String> job, boolean virtual) {
    }

    private static DynamoDbClient client(Emulators e, boolean timeouts) {
        return timeouts ? EmulatorClients.dynamo(e, o -> o.apiCallAttemptTimeout(Duration.ofSeconds(2)).apiCallTimeout(Duration.ofSeconds(6)))
                : EmulatorClients.dynamo(e);
    }

    /** The baseline's calls, as {@link NaiveConsumer} makes them around its handler. */
    private static void idempotent(DynamoDbClient dynamo, String table, String jobId) {
        NaiveConsumer.claim(dynamo, table, jobId);
        NaiveConsumer.complete(dynamo, table, jobId);
    }

    /** A healthy job's ledger writes, as the intake and the outcome make them: the attempt started, then succeeded. */
    private static void ledgerJob(DynamoLedgerStore ledger, String jobId) {
        Instant now = Instant.now();
        LedgerRecord started = ledger.write(LedgerRecord.fresh(jobId, "acme", "permit-report", 1, now).withAttempt(1)
                .moveTo(JobState.ACTIVE, now).withEntry(AttemptEntry.started(1, 1, now, "worker-1"), 10)
                .withLease("worker-1", now.plusSeconds(300)));
        Instant end = Instant.now();
        ledger.write(started.withCurrentEntry(started.currentEntry().ended(AttemptOutcome.SUCCEEDED, null, null, null, end))
                .moveTo(JobState.SUCCEEDED, end).withLease(null, null).withExpiry(end.plus(Duration.ofDays(7)))
                .withEffects(Map.of("completion-notice", 1)));
    }

    /** Runs {@code jobs} jobs of one shape, {@code concurrency} at a time; returns the process's CPU ms per job. */
    private static double window(Shape shape, int jobs, int concurrency, String idPrefix) throws Exception {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        AtomicInteger next = new AtomicInteger();
        ExecutorService threads = shape.virtual() ? Executors.newVirtualThreadPerTaskExecutor() : Executors.newFixedThreadPool(concurrency);
        long cpu = os.getProcessCpuTime();
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < concurrency; i++) {
                running.add(threads.submit(() -> {
                    for (int k = next.getAndIncrement(); k < jobs; k = next.getAndIncrement()) {
                        shape.job().accept(idPrefix + k);
                    }
                }));
            }
            for (Future<?> f : running) {
                f.get();
            }
        } finally {
            threads.shutdown();
        }
        return (os.getProcessCpuTime() - cpu) / 1e6 / jobs;
    }

    static String report(Map<String, List<Double>> cost, int jobs, int rounds, int concurrency) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "DynamoDB client CPU per healthy job's two ledger writes: %d jobs per window, %d at a time, %d rounds "
                + "(every other one in reverse order), one JVM and one dynalite; CPU is the whole process's over each window%n%n", jobs, concurrency, rounds));
        out.append(String.format(Locale.ROOT, "%-50s %10s %8s  %s%n", "how the writes are made", "CPU ms/job", "ratio", "each round"));
        double base = median(cost.get(IDEMPOTENT));
        for (Map.Entry<String, List<Double>> e : cost.entrySet()) {
            double m = median(e.getValue());
            out.append(String.format(Locale.ROOT, "%-50s %10.3f %8.2f  %s%n", e.getKey(), m, m / base,
                    e.getValue().stream().map(v -> String.format(Locale.ROOT, "%.3f", v)).toList()));
        }
        double ledger = median(cost.get(LEDGER)) / base;
        out.append(String.format(Locale.ROOT, "%nThe ratio is to the first row's median. The rows after the second change one thing each: the threads the "
                + "calls are made from, or the client's per-call timeouts (the worker schedules those on Quarkus's executor, not the SDK's own threads "
                + "used here).%n"));
        out.append(String.format(Locale.ROOT, "%nVERDICT: %s the ledger's two writes cost the client %.2f times the baseline's two calls (limit %.2f); "
                        + "from virtual threads %.2f, with per-call timeouts %.2f%n",
                ledger <= LIMIT ? "PASS" : "FAIL", ledger, LIMIT, median(cost.get(VIRTUAL)) / base, median(cost.get(TIMED)) / base));
        return out.toString();
    }

    private static double median(List<Double> values) {
        return BenchReport.median(values);
    }
}

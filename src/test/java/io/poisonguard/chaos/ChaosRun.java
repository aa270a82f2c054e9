package io.poisonguard.chaos;

import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ServiceProcess;
import org.awaitility.core.ConditionTimeoutException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;

/**
 * One chaos run: several service JVMs consume a mixed workload (healthy, transient, throttled, poison,
 * hanging and JVM-killing jobs) sent as a stream, while a random worker is SIGKILLed every few seconds
 * and restarted, workers that die by themselves are restarted too (like an orchestrator would), and
 * DynamoDB is frozen once. It waits until every job has a terminal outcome (or the bound runs out),
 * stops the workers and hands what it saw to {@link ChaosReport#reconcile}.
 */
public final class ChaosRun {
    /**
     * One job of the workload. {@code home} is the worker slot (1..N) that carries a counted fault
     * (transient, throttled), 0 for the others.
     */
    public record Job(String id, JobKind kind, String permitId, int home) {
    }

    /** What the run did and saw, before reconciliation. */
    public record Outcome(ChaosSettings settings, Names names, List<Job> jobs, Instant started, Instant firstSend, Instant lastSend,
                          int kills, int killsSkipped, Map<String, Integer> selfExitsByCode, int starts, Instant freezeStart, Instant freezeEnd,
                          boolean settled, Instant settledAt, Instant finished, Path logDir) {
        public int selfExits() {
            return selfExitsByCode.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    private final ChaosSettings s;
    private final Emulators emulators;
    private final SqsClient sqs;
    private final DynamoDbClient dynamo;
    private final Path logDir;
    private final Names names;
    private final Queues queues;
    private final Random random;

    private final AtomicInteger kills = new AtomicInteger();
    private final AtomicInteger killsSkipped = new AtomicInteger();
    private final Map<String, Integer> selfExits = new ConcurrentHashMap<>();
    private final AtomicReference<Instant> freezeStart = new AtomicReference<>();
    private final AtomicReference<Instant> freezeEnd = new AtomicReference<>();
    private final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
    private final List<Job> jobs;
    private final DynamoDbClient budgetReader;
    private volatile Instant firstSend;

    public ChaosRun(ChaosSettings settings, Emulators emulators, SqsClient sqs, DynamoDbClient dynamo, Path logDir) {
        this.s = settings;
        this.emulators = emulators;
        this.sqs = sqs;
        this.dynamo = dynamo;
        this.logDir = logDir;
        this.names = new Names("chaos" + UUID.randomUUID().toString().substring(0, 6), settings.fifoNotices());
        this.queues = new Queues(sqs, names);
        this.random = new Random(settings.seed());
        this.jobs = workload();
        this.budgetReader = EmulatorClients.dynamo(emulators, Duration.ofSeconds(2));
    }

    public Names names() {
        return names;
    }

    /** The workload, shuffled by the seed so the poison is spread through the stream. */
    public List<Job> workload() {
        List<Job> jobs = new ArrayList<>();
        add(jobs, JobKind.HEALTHY, "healthy", s.healthy());
        add(jobs, JobKind.TRANSIENT, "transient", s.transientJobs());
        add(jobs, JobKind.THROTTLED, "throttled", s.throttled());
        add(jobs, JobKind.POISON, "poison", s.poison());
        add(jobs, JobKind.CRASH, s.crashFault(), s.crash());
        add(jobs, JobKind.HANG, "hang", s.hang());
        Collections.shuffle(jobs, new Random(s.seed()));
        return List.copyOf(jobs);
    }

    private void add(List<Job> jobs, JobKind kind, String label, int n) {
        for (int i = 1; i <= n; i++) {
            String id = label + "-" + i;
            jobs.add(new Job(id, kind, "P-" + id, budget(kind) > 0 ? 1 + (i - 1) % s.workers() : 0));
        }
    }

    /**
     * How many provider failures a counted-fault job is meant to see in all: transient fails twice
     * (503), throttled once (429). The simulated provider counts calls per JVM, so scripting
     * {@code fail:2} on every worker would let a job fail twice on each of them and again on every
     * restarted JVM (under kills every few seconds that is nearly every attempt, and such a job
     * ends quarantined TRANSIENT for the simulator's sake). So the fault lives on the job's home
     * worker only, and each restart of that worker gets what is left of the budget, counted from
     * the failures of that class its ledger item has recorded.
     */
    private static int budget(JobKind kind) {
        return switch (kind) {
            case TRANSIENT -> 2;
            case THROTTLED -> 1;
            default -> 0;
        };
    }

    private static String counted(JobKind kind, int n) {
        return (kind == JobKind.TRANSIENT ? "fail:" : "throttle:") + n;
    }

    private static String faultKey(Job j) {
        return "poison-guard.example.provider.faults." + j.permitId();
    }

    /** Worker settings: fast crash detection, its own prefix and worker id, and the scripted faults of the workload. */
    Map<String, String> workerSettings(int worker, List<Job> jobs) {
        Map<String, String> o = ServiceProcess.fastCrashSettings(names.prefix(), s.concurrency());
        o.put("poison-guard.worker-id", names.prefix() + "-w" + worker);
        o.put("poison-guard.notices.fifo", Boolean.toString(s.fifoNotices()));
        o.put("poison-guard.ledger.item-format", s.itemFormatOf(worker));
        if (!s.attemptDeadline().isEmpty()) {
            o.put("poison-guard.attempt.deadline", s.attemptDeadline());
        }
        // A hung job's retries come back within seconds here, as the crash ladders do.
        o.put("poison-guard.failure.timeout.base", "500ms");
        o.put("poison-guard.failure.timeout.cap", "1s");
        for (Job j : jobs) {
            String fault = switch (j.kind()) {
                case TRANSIENT, THROTTLED -> j.home() == worker ? counted(j.kind(), budget(j.kind())) : null;
                case CRASH -> s.crashFault();
                case HANG -> s.hangFault();
                case HEALTHY, POISON -> null;
            };
            if (fault != null) {
                o.put(faultKey(j), fault);
            }
        }
        return o;
    }

    public Outcome run() throws Exception {
        Instant started = Instant.now();
        Files.createDirectories(logDir);
        event("run " + names.prefix() + ": " + s.describe());
        List<ServiceProcess> workers = new ArrayList<>();
        for (int i = 1; i <= s.workers(); i++) {
            workers.add(new ServiceProcess(names.prefix() + "-w" + i, emulators, workerSettings(i, jobs), logDir));
        }
        ScheduledExecutorService chaos = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "chaos-workers"));
        ScheduledExecutorService freezer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "chaos-freeze"));
        ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "chaos-send"));
        boolean settled = false;
        Instant settledAt = null;
        AtomicReference<Instant> lastSend = new AtomicReference<>();
        try {
            // The first worker creates the queues and tables; the others start once they exist.
            workers.get(0).start();
            event("started " + workers.get(0).name() + " pid " + workers.get(0).pid());
            ServiceProcess first = workers.get(0);
            try {
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                        .failFast("the first worker exited during startup", () -> !first.alive())
                        .until(() -> queues.url(names.jobsQueue()) != null && queues.url(names.noticesQueue()) != null
                                && queues.url(names.deadLetterQueue()) != null
                                && dynamo.describeTable(b -> b.tableName(names.ledgerTable())) != null
                                && dynamo.describeTable(b -> b.tableName(names.quarantineTable())) != null
                                && dynamo.describeTable(b -> b.tableName(names.payloadsTable())) != null);
            } catch (RuntimeException e) {
                String log = Files.exists(first.log()) ? String.join("\n", Files.readAllLines(first.log()).stream().limit(30).toList()) : "(no log)";
                throw new IllegalStateException("the first worker did not create the queues and tables (" + e.getMessage() + "); its log "
                        + first.log() + " begins:\n" + log, e);
            }
            for (ServiceProcess w : workers.subList(1, workers.size())) {
                w.start();
                event("started " + w.name() + " pid " + w.pid());
            }

            // The workload arrives as a stream, one batch of ten at a time at the configured rate.
            String jobsUrl = queues.url(names.jobsQueue());
            AtomicInteger nextBatch = new AtomicInteger();
            int batches = (jobs.size() + 9) / 10;
            long period = Math.max(1, (long) (10_000 / s.sendRate()));
            sender.scheduleAtFixedRate(() -> {
                int b = nextBatch.get();
                if (b >= batches) {
                    return;
                }
                try {
                    send(jobsUrl, jobs.subList(b * 10, Math.min(jobs.size(), b * 10 + 10)));
                    if (firstSend == null) {
                        firstSend = Instant.now();
                    }
                    nextBatch.incrementAndGet();
                    if (b + 1 == batches) {
                        lastSend.set(Instant.now());
                        event("all " + jobs.size() + " jobs sent");
                    }
                } catch (RuntimeException e) {
                    event("send of batch " + b + " failed, retried next tick: " + e);
                }
            }, 0, period, TimeUnit.MILLISECONDS);

            // An orchestrator: restarts workers that exit by themselves, and a chaos monkey that SIGKILLs one.
            chaos.scheduleWithFixedDelay(() -> supervise(workers), 250, 250, TimeUnit.MILLISECONDS);
            if (!s.killEvery().isZero()) {
                chaos.scheduleAtFixedRate(() -> killOne(workers), s.killEvery().toMillis(), s.killEvery().toMillis(), TimeUnit.MILLISECONDS);
            }
            if (!s.freeze().isZero()) {
                freezer.schedule(this::freeze, s.freezeAt().toMillis(), TimeUnit.MILLISECONDS);
                freezer.schedule(this::thaw, s.freezeAt().plus(s.freeze()).toMillis(), TimeUnit.MILLISECONDS);
            }

            await().atMost(s.sendWindow().plus(Duration.ofSeconds(120))).pollInterval(Duration.ofMillis(200))
                    .until(() -> lastSend.get() != null);
            try {
                await().atMost(s.settleTimeout().plus(freezeStillAhead())).pollInterval(Duration.ofSeconds(2)).ignoreExceptions()
                        .until(() -> settled(jobs));
                settled = true;
                settledAt = Instant.now();
                event("every job has a terminal outcome");
            } catch (ConditionTimeoutException e) {
                event("NOT SETTLED within the bound of " + ChaosSettings.text(s.settleTimeout()) + " after the last send");
            }
        } finally {
            sender.shutdownNow();
            chaos.shutdownNow();
            chaos.awaitTermination(60, TimeUnit.SECONDS);
            freezer.shutdownNow();
            freezer.awaitTermination(30, TimeUnit.SECONDS);
            if (freezeStart.get() != null && freezeEnd.get() == null) {
                thaw();
            }
            stopAll(workers);
            budgetReader.close();
            writeEvents();
        }
        int starts = workers.stream().mapToInt(ServiceProcess::starts).sum();
        return new Outcome(s, names, jobs, started, firstSend, lastSend.get(), kills.get(), killsSkipped.get(), Map.copyOf(selfExits), starts,
                freezeStart.get(), freezeEnd.get(), settled, settledAt, Instant.now(), logDir);
    }

    /** If the freeze has not happened yet when the last job is sent, the bound waits for it too. */
    private Duration freezeStillAhead() {
        if (s.freeze().isZero() || freezeEnd.get() != null || firstSend == null) {
            return Duration.ZERO;
        }
        Instant end = firstSend.plus(s.freezeAt()).plus(s.freeze());
        Duration d = Duration.between(Instant.now(), end);
        return d.isNegative() ? Duration.ZERO : d;
    }

    private void send(String url, List<Job> batch) {
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (Job j : batch) {
            boolean v1 = j.kind() == JobKind.POISON;
            entries.add(SendMessageBatchRequestEntry.builder().id("m" + entries.size())
                    .messageBody(v1 ? Queues.permitV1(j.permitId()) : Queues.permitV3(j.permitId()))
                    .messageAttributes(Queues.sdk(Queues.permitAttributes(j.id(), s.tenant(), v1 ? 1 : 3))).build());
        }
        SendMessageBatchResponse r = sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries));
        if (!r.failed().isEmpty()) {
            throw new IllegalStateException("SendMessageBatch failed for " + r.failed());
        }
    }

    /**
     * Starts the next incarnation of a worker slot, with what is left of the counted-fault budget of
     * the jobs homed on it. A ledger that cannot be read in time (DynamoDB frozen) leaves no budget:
     * the job then simply sees fewer failures than scripted.
     */
    private void restart(List<ServiceProcess> workers, ServiceProcess w) {
        int slot = workers.indexOf(w) + 1;
        List<String> budgets = new ArrayList<>();
        boolean reachable = true;
        for (Job j : jobs) {
            if (j.home() != slot) {
                continue;
            }
            int left = 0;
            if (reachable) {
                try {
                    left = Math.max(0, budget(j.kind()) - failuresRecorded(j));
                } catch (RuntimeException e) {
                    // One timeout is enough: the restart does not wait on every other item too.
                    reachable = false;
                    event("could not read " + j.id() + "'s ledger item before restarting " + w.name() + " (" + e.getClass().getSimpleName()
                            + "); the fault budgets of the jobs homed there are spent for this incarnation");
                }
            }
            if (left > 0) {
                w.set(faultKey(j), counted(j.kind(), left));
                budgets.add(j.id() + "=" + counted(j.kind(), left));
            } else {
                w.unset(faultKey(j));
            }
        }
        w.start();
        event("started " + w.name() + " pid " + w.pid() + (budgets.isEmpty() ? "" : " with faults left " + budgets));
    }

    private int failuresRecorded(Job j) {
        String cls = j.kind() == JobKind.TRANSIENT ? "TRANSIENT" : "THROTTLED";
        // The whole item: a compact one keeps its failures inside its record attribute.
        Map<String, AttributeValue> item = budgetReader.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true)
                .key(Map.of("jobId", AttributeValue.fromS(new JobKey(s.tenant(), j.id()).storage())))).item();
        if (item == null || item.isEmpty()) {
            return 0;
        }
        return Integer.parseInt(Tables.fields(DynamoLedgerStore.decode(item)).getOrDefault("failures." + cls, "0"));
    }

    /** Runs on the chaos thread only (as does {@link #killOne}), so the two never race on a worker. */
    private void supervise(List<ServiceProcess> workers) {
        for (ServiceProcess w : workers) {
            try {
                if (!w.alive()) {
                    int code = w.exitCode();
                    selfExits.merge("exit " + code, 1, Integer::sum);
                    event(w.name() + " pid " + w.pid() + " exited by itself with code " + code + " (log " + w.log().getFileName() + "); restarting");
                    restart(workers, w);
                }
            } catch (RuntimeException e) {
                event("supervising " + w.name() + " failed: " + e);
            }
        }
    }

    /**
     * SIGKILLs a random ready worker and restarts it, honouring a disruption budget as an orchestrator
     * would (a PodDisruptionBudget, maxUnavailable = chaos.max-unavailable, 1 by default): while that many
     * workers are still booting (or waiting to be restarted) the tick is skipped. A JVM still booting holds no job, so killing it tests nothing;
     * on a loaded machine boots take tens of seconds, and unbounded kills would keep the whole fleet down.
     */
    private void killOne(List<ServiceProcess> workers) {
        List<ServiceProcess> ready = workers.stream().filter(ServiceProcess::ready).toList();
        if (ready.isEmpty() || workers.size() - ready.size() >= s.maxUnavailable()) {
            killsSkipped.incrementAndGet();
            event("kill skipped: " + (workers.size() - ready.size()) + " worker(s) still booting");
            return;
        }
        ServiceProcess w = ready.get(random.nextInt(ready.size()));
        try {
            long pid = w.pid();
            w.kill();
            kills.incrementAndGet();
            event("SIGKILL " + w.name() + " pid " + pid + " (log " + w.log().getFileName() + "); restarting");
            restart(workers, w);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            event("killing " + w.name() + " failed: " + e);
        }
    }

    private void freeze() {
        try {
            emulators.freezeDynamo();
            freezeStart.set(Instant.now());
            event("DynamoDB frozen: SIGSTOP dynalite pid " + emulators.dynalitePid() + " for " + ChaosSettings.text(s.freeze()));
        } catch (RuntimeException e) {
            event("freezing DynamoDB failed: " + e);
        }
    }

    private void thaw() {
        if (freezeStart.get() == null || freezeEnd.get() != null) {
            return;
        }
        try {
            emulators.thawDynamo();
            freezeEnd.set(Instant.now());
            event("DynamoDB thawed: SIGCONT dynalite pid " + emulators.dynalitePid());
        } catch (RuntimeException e) {
            event("thawing DynamoDB failed: " + e);
        }
    }

    /** Every job's ledger state is terminal, every quarantined job has its record, and the jobs queue is empty. */
    private boolean settled(List<Job> jobs) {
        Map<String, Map<String, String>> ledger = Tables.ledger(dynamo, names.ledgerTable());
        Set<String> quarantined = Tables.scan(dynamo, names.quarantineTable(), Set.of("failureClass")).keySet();
        for (Job j : jobs) {
            Map<String, String> item = ledger.get(j.id());
            String state = item == null ? null : item.get("state");
            if (!"SUCCEEDED".equals(state) && !"QUARANTINED".equals(state)) {
                return false;
            }
            if ("QUARANTINED".equals(state) && !quarantined.contains(j.id())) {
                return false;
            }
        }
        return queues.depth(names.jobsQueue()) == 0;
    }

    private static void stopAll(List<ServiceProcess> workers) {
        List<CompletableFuture<Void>> stops = workers.stream().map(w -> CompletableFuture.runAsync(() -> {
            try {
                w.stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        })).toList();
        stops.forEach(CompletableFuture::join);
    }

    private void event(String what) {
        Instant now = Instant.now();
        String rel = firstSend == null ? "" : String.format(Locale.ROOT, " (+%.1fs)", Duration.between(firstSend, now).toMillis() / 1000.0);
        String line = now + rel + " " + what;
        events.add(line);
        System.out.println("[chaos] " + line);
    }

    private void writeEvents() {
        try {
            Files.write(logDir.resolve(names.prefix() + "-events.log"), events, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

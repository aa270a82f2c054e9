package io.poisonguard.bench;

import io.poisonguard.config.Names;
import io.poisonguard.observability.AwsRequestCounter;
import io.poisonguard.sqs.QueueBootstrap;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ServiceProcess;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmark {@code scripts/bench.sh} runs: on one pair of emulators, the same preloaded backlog of
 * permit-report jobs is consumed by a naive consumer, an idempotent-naive one and poison-guard (its packaged
 * JVM), at each concurrency, interleaved round by round; then poison-guard with poison mixed in. Rates are
 * measured over the notices' own timestamps (first to last notice), so boot time does not count.
 * Requests are counted on the wire by an SDK interceptor, per operation. Not part of the default build.
 */
class BenchIT {
    private static final Pattern REQUESTS = Pattern.compile(
            "^poison_guard_aws_requests_total\\{operation=\"([^\"]+)\",service=\"([^\"]+)\"} ([0-9.eE+]+)$", Pattern.MULTILINE);
    /** Outcomes by kind (summed over failure classes): give-backs and duplicates show in the report beside the requests. */
    private static final Pattern OUTCOMES = Pattern.compile(
            "^poison_guard_outcomes_total\\{[^}]*outcome=\"([^\"]+)\"[^}]*} ([0-9.eE+]+)$", Pattern.MULTILINE);

    /**
     * One run's window: its per-message CPU is the consumer process's ({@code cpuMs}, of which {@code jitShare} was its JIT
     * compiler threads'), dynalite's, and this JVM's ({@code sqsEmulatorCpuMs}: ElasticMQ, plus the bench's own polling).
     */
    record Result(String consumer, int concurrency, int messages, double seconds, Map<String, Long> requests, double cpuMs,
                  double jitShare, double dynamoEmulatorCpuMs, double sqsEmulatorCpuMs, long p50, long p99, int warmedUp, Warmth warmth) {
        double rate() {
            return messages / seconds;
        }

        double perMessage(String prefix) {
            return requests.entrySet().stream().filter(e -> e.getKey().startsWith(prefix)).mapToLong(Map.Entry::getValue).sum() / (double) messages;
        }
    }

    @Test
    void naiveIdempotentAndPoisonGuardOnTheSameBacklog() throws Exception {
        int jobs = Integer.getInteger("bench.jobs", 8000);
        int rounds = Integer.getInteger("bench.rounds", 2);
        List<Integer> concurrencies = List.of(System.getProperty("bench.concurrency", "8,32").split(",")).stream()
                .map(String::trim).map(Integer::parseInt).toList();
        double poison = Double.parseDouble(System.getProperty("bench.poison-percent", "1"));
        // Every consumer first drains a warm-up backlog that is not measured: the rates are those of a
        // running consumer, not of a JVM compiling its hot paths (poison-guard starts a fresh JVM per run).
        int warmup = Integer.getInteger("bench.warmup", 15000);
        // -Dbench.consumers=poison-guard: only some of the consumers (for trying settings; no ratio without naive).
        List<String> consumers = List.of(System.getProperty("bench.consumers", "naive,idempotent-naive,poison-guard").split(","));
        // -Dbench.compare-options=key=value,...: poison-guard once more per round with these settings (on top of the service options).
        Map<String, String> compare = options("bench.compare-options");
        // -Dbench.compare-jvm-options='-XX:...': that compared run's JVM options instead of the consumers' (a collector, say).
        List<String> compareJvm = jvmOptions("bench.compare-jvm-options");
        boolean comparing = !compare.isEmpty() || !compareJvm.isEmpty();
        if (comparing) {
            Map<String, String> both = new HashMap<>(options("bench.service-options"));
            both.putAll(compare);
            compare = both;
        }
        String compareName = "pg [" + String.join(" ", java.util.stream.Stream.concat(
                java.util.stream.Stream.of(System.getProperty("bench.compare-options", "")), compareJvm.stream())
                .filter(o -> !o.isBlank()).toList()) + "]";
        Emulators emulators = Emulators.shared();
        List<Result> results = new ArrayList<>();
        try (SqsClient sqs = EmulatorClients.sqs(emulators); DynamoDbClient dynamo = EmulatorClients.dynamo(emulators);
             SqsClient countedSqs = counted(SqsClient.builder(), emulators.sqsEndpoint());
             DynamoDbClient countedDynamo = counted(DynamoDbClient.builder(), emulators.dynamoEndpoint())) {
            // The emulators are warmed once, unmeasured, so the first consumer measured does not pay for their warm-up.
            int top0 = concurrencies.get(concurrencies.size() - 1);
            int emulatorWarmup = Math.min(3000, Math.max(warmup, 1000));
            runNaive(emulators, sqs, dynamo, countedSqs, countedDynamo, "emulator warm-up", top0, emulatorWarmup, 0, 0, NaiveConsumer.Mode.IDEMPOTENT);
            runNaive(emulators, sqs, dynamo, countedSqs, countedDynamo, "emulator warm-up", top0, emulatorWarmup, 0, 0, NaiveConsumer.Mode.NAIVE);
            for (int round = 1; round <= rounds; round++) {
                for (int c : concurrencies) {
                    List<java.util.concurrent.Callable<Result>> runs = new ArrayList<>();
                    for (NaiveConsumer.Mode mode : NaiveConsumer.Mode.values()) {
                        if (consumers.contains(mode.label)) {
                            runs.add(() -> runNaive(emulators, sqs, dynamo, countedSqs, countedDynamo, mode.label, c, jobs, warmup, mode));
                        }
                    }
                    if (consumers.contains("poison-guard")) {
                        runs.add(() -> runService(emulators, sqs, dynamo, "poison-guard", c, jobs, warmup, 0, options("bench.service-options"),
                                CONSUMER_JVM));
                    }
                    if (comparing) {
                        // Side by side in the same round: poison-guard again with other settings, to tell a setting's effect from noise.
                        Map<String, String> settings = compare;
                        List<String> jvm = compareJvm.isEmpty() ? CONSUMER_JVM : compareJvm;
                        runs.add(() -> runService(emulators, sqs, dynamo, compareName, c, jobs, warmup, 0, settings, jvm));
                    }
                    // A run's place in the round matters on this kind of machine (the later of two identical poison-guard
                    // runs was about 8% faster, whichever settings it had): every other round goes in reverse order, so
                    // over an even number of rounds each consumer holds every place equally often.
                    if (round % 2 == 0) {
                        java.util.Collections.reverse(runs);
                    }
                    for (java.util.concurrent.Callable<Result> run : runs) {
                        // A fresh DynamoDB emulator for every run (naive's too, which does not use it, so every run
                        // starts the same way): within one bench dynalite's CPU per request grew from run to run, by up
                        // to a fifth for the same consumer between its first and second round, which charged the later
                        // runs of the two consumers that use it for the runs before them.
                        emulators.restartDynamo();
                        results.add(run.call());
                    }
                    System.out.println("[bench] round " + round + " concurrency " + c + " done");
                }
                int top = concurrencies.get(concurrencies.size() - 1);
                if (poison > 0 && consumers.contains("poison-guard")) {
                    emulators.restartDynamo();
                    results.add(runService(emulators, sqs, dynamo, "poison-guard " + poison + "% poison", top, jobs, warmup, poison,
                            options("bench.service-options"), CONSUMER_JVM));
                }
            }
        }
        String report = BenchReport.render(results, jobs, warmup, rounds, Boolean.getBoolean("bench.in-process-baselines"));
        String settings = System.getProperty("bench.service-options", "");
        // The settings poison-guard ran with besides its defaults: a report is read without the command that made it.
        report = (settings.isBlank() ? "poison-guard settings: the defaults" : "poison-guard settings: " + settings) + "\n" + report;
        Path out = Files.createDirectories(Path.of("target", "bench")).resolve("report.txt");
        Files.writeString(out, report, StandardCharsets.UTF_8);
        System.out.println("\n" + report);
        assertTrue(report.contains("VERDICT: PASS"), "see " + out);
    }

    /** A client on the emulator at {@code endpoint} whose requests are counted on the wire, per operation ({@link AwsRequestCounter}). */
    static <B extends software.amazon.awssdk.awscore.client.builder.AwsClientBuilder<B, C>
            & software.amazon.awssdk.core.client.builder.SdkSyncClientBuilder<B, C>, C> C counted(B builder, String endpoint) {
        return builder.endpointOverride(URI.create(endpoint)).region(Region.of(Emulators.REGION))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(64))
                .overrideConfiguration(o -> o.addExecutionInterceptor(new AwsRequestCounter())).build();
    }

    /** A fresh prefix with its queues, and a backlog of {@code jobs} sent to it. */
    private static Backlog preload(SqsClient sqs, Names names, int jobs, double poisonPercent) {
        new QueueBootstrap(sqs, names).ensureQueues(Duration.ofDays(4), Duration.ofSeconds(30), 100);
        Backlog backlog = new Backlog(sqs, sqs.getQueueUrl(b -> b.queueName(names.jobsQueue())).queueUrl(), poisonPercent);
        backlog.add(jobs);
        return backlog;
    }

    /**
     * The jobs of one run and when each was sent. Every job is alike but for the poison ones (one in
     * {@code 100 / poisonPercent}, spread evenly), so the jobs a longer warm-up adds behind the backlog ({@link #warmUp})
     * are the same work as those it lets through first.
     */
    static final class Backlog {
        private final SqsClient sqs;
        private final String url;
        private final int everyPoison;
        final Map<String, Long> sent = new HashMap<>();

        Backlog(SqsClient sqs, String url, double poisonPercent) {
            this.sqs = sqs;
            this.url = url;
            this.everyPoison = poisonPercent <= 0 ? Integer.MAX_VALUE : (int) Math.round(100 / poisonPercent);
        }

        /** Sends {@code jobs} more, several batches at a time, so a consumer draining the backlog meanwhile is not left waiting for them. */
        void add(int jobs) {
            int from = sent.size();
            List<List<SendMessageBatchRequestEntry>> batches = new ArrayList<>();
            for (int i = from; i < from + jobs; i += 10) {
                List<SendMessageBatchRequestEntry> batch = new ArrayList<>();
                for (int n = i; n < Math.min(from + jobs, i + 10); n++) {
                    String id = "job-" + n;
                    boolean bad = n % everyPoison == everyPoison - 1;
                    batch.add(SendMessageBatchRequestEntry.builder().id("e" + n)
                            .messageBody(bad ? Queues.permitV1("P-" + n) : Queues.permitV3("P-" + n))
                            .messageAttributes(Queues.sdk(Queues.permitAttributes(id, "tenant-bench", bad ? 1 : 3))).build());
                    sent.put(id, System.currentTimeMillis());
                }
                batches.add(batch);
            }
            try (java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(8)) {
                List<java.util.concurrent.Future<?>> sends = new ArrayList<>();
                for (List<SendMessageBatchRequestEntry> batch : batches) {
                    sends.add(senders.submit(() -> sqs.sendMessageBatch(b -> b.queueUrl(url).entries(batch))));
                }
                for (java.util.concurrent.Future<?> f : sends) {
                    f.get();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while sending the backlog", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("sending the backlog failed", e.getCause());
            }
        }

        /** Poison jobs among the first {@code jobs} sent. */
        private int poisonAmong(int jobs) {
            return everyPoison == Integer.MAX_VALUE ? 0 : jobs / everyPoison;
        }

        /** Notices expected once the first {@code jobs} sent are done (poison ones send none). */
        int notices(int jobs) {
            return jobs - poisonAmong(jobs);
        }

        int healthy() {
            return notices(sent.size());
        }

        int poison() {
            return poisonAmong(sent.size());
        }
    }

    /** Jobs a warm-up is extended by at a time, and over which its JIT's share is measured. */
    static final int SETTLE_STEP = Integer.getInteger("bench.settle-step", 3000);
    /**
     * A consumer whose JIT compiler threads used less than this share of its CPU over each of the last
     * {@link #SETTLE_STEPS} steps has settled. One step was not enough (until 2026-12-05): compiling comes in bursts, and a
     * step of 3000 jobs lasts under three seconds, so a warm-up could end on a quiet step with the compiler still at 12-17%
     * of the window that followed (a flight recording of one such run: 36.8 s of compile time when the window opened,
     * 38.1 s once it settled).
     */
    static final double SETTLE_JIT = Double.parseDouble(System.getProperty("bench.settle-jit", "0.10"));
    /**
     * How many quiet steps in a row end a warm-up. Two were not enough either (until 2026-12-07): naive's compiling
     * comes in bursts of a step at 27-34% between pairs of quiet ones (7% and 6%, 5% and 4%, 2% and 5%), and such a
     * pair ended six of its warm-ups in one session; naive at 32 stopped at 15000 and 18000 jobs on two steps just
     * under the line and ran about half its settled rate in the window (twenty-eighth table).
     */
    static final int SETTLE_STEPS = Integer.getInteger("bench.settle-steps", 3);
    /**
     * The longest warm-up, settled or not. It was 60000 until 2026-12-05, when naive at 8 was found to reach it in every
     * run still compiling (its JIT 15-43% of its CPU over each step from 15000 to 99000 jobs), so the denominator of every
     * ratio at 8 was a baseline slower than it becomes: let to settle it did so after 81000 and 120000 jobs, at 2867 and 3610
     * msgs/s with 0.20 ms of CPU per message against 0.27-0.37 (BENCHMARKS.md, twenty-fourth table).
     */
    static final int WARMUP_MAX = Integer.getInteger("bench.warmup-max", 180000);

    /**
     * The scheduling priority every consumer process runs at, the baselines' and poison-guard's alike, above this JVM's
     * ({@code nice}, 0 to 19; {@code scripts/bench.sh --consumer-nice}, default 0). At 10 the emulators and this JVM
     * (ElasticMQ and the bench's driver) answer before the consumers; measured so on 2026-12-07, naive ran 19-28% slower
     * with ElasticMQ's CPU per naive message up from 0.34-0.42 to 0.54-0.56 ms (BENCHMARKS.md, thirtieth table): it
     * moves the baseline every ratio divides by, so it is not the default. The DynamoDB emulator's own priority is
     * {@code --dynamo-nice} ({@code Emulators}, {@code -Demulators.dynalite-nice}), which no baseline but the idempotent
     * one touches.
     */
    static final int CONSUMER_NICE = Integer.getInteger("bench.consumer-nice", 0);

    /** What a consumer's command line starts with at {@link #CONSUMER_NICE}. */
    static List<String> launcher() {
        return launcher(CONSUMER_NICE);
    }

    /** What a consumer's command line starts with to run {@code nice} below this JVM: {@code nice -n N}, or nothing at 0. */
    static List<String> launcher(int nice) {
        if (nice < 0 || nice > 19) {
            throw new IllegalArgumentException("bench.consumer-nice must be 0 to 19 (a consumer may only yield): " + nice);
        }
        return nice == 0 ? List.of() : List.of("nice", "-n", Integer.toString(nice));
    }

    /** {@link #checkNice(long, int)} at {@link #CONSUMER_NICE}. */
    static void checkNice(long pid) {
        checkNice(pid, CONSUMER_NICE);
    }

    /**
     * Fails the run unless process {@code pid} runs {@code above} below this JVM ({@code nice} adds to the niceness it is
     * started with, up to 19), read from Linux's {@code /proc/<pid>/stat} (nothing is checked where there is no such
     * file): a report must not name a method its runs did not have.
     */
    static void checkNice(long pid, int above) {
        java.util.OptionalInt nice = niceOf(pid);
        java.util.OptionalInt own = niceOf(ProcessHandle.current().pid());
        if (nice.isEmpty() || own.isEmpty()) {
            return;
        }
        int expected = Math.min(19, own.getAsInt() + above);
        if (nice.getAsInt() != expected) {
            throw new IllegalStateException("consumer process " + pid + " runs at nice " + nice.getAsInt() + ", not the " + expected
                    + " asked for (bench.consumer-nice " + above + " above this JVM's)");
        }
    }

    /**
     * The priority dynalite was asked to run at ({@code scripts/bench.sh --dynamo-nice}, default 0, the consumers' own).
     * dynalite answers on one Node.js thread, and at the consumers' priority it queues behind the two JVMs' threads on two
     * cores. At -10 it answers first: the thirtieth table's default, withdrawn in the thirty-first (BENCHMARKS.md), because
     * it is not neutral between the consumers that call it: side by side on one machine it halved idempotent-naive's rate
     * at 32 (1288 msgs/s at 0, 597 at -10 after the same warm-up), with dynalite's own CPU per message up a third, and did
     * not speed poison-guard up (1096 at 0, 889 at -10). Lowering a niceness needs root: without it dynalite runs at this
     * JVM's priority and the report says so.
     */
    static final int DYNAMO_NICE = Integer.getInteger("emulators.dynalite-nice", 0);

    /**
     * The priorities dynalite answered at as the windows opened, read back from {@code /proc}: {@code scripts/bench.sh
     * --dynamo-nice} asks for one (a negative one needs root, and without it dynalite runs at this JVM's), and the report
     * names what it got.
     */
    static final java.util.Set<Integer> DYNALITE_NICE = new java.util.concurrent.ConcurrentSkipListSet<>();

    /** Process {@code pid}'s nice value from Linux's {@code /proc/<pid>/stat}; empty where there is no such file. */
    static java.util.OptionalInt niceOf(long pid) {
        try {
            return java.util.OptionalInt.of(niceOf(Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII)));
        } catch (IOException | RuntimeException unreadable) {
            return java.util.OptionalInt.empty();
        }
    }

    /** The nice value in a {@code /proc/<pid>/stat} line: its nineteenth field, counted past the command name's closing parenthesis. */
    static int niceOf(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Integer.parseInt(f[16]);
    }

    /** How a run's warm-up ended: its JIT settled, it reached {@link #WARMUP_MAX} still compiling, or it was fixed (not checked). */
    enum Warmth {
        SETTLED, CAPPED, FIXED
    }

    /** A warm-up's length in jobs, and how it ended. */
    record WarmUp(int jobs, Warmth warmth) {
    }

    /**
     * Seconds each measured window should last (-Dbench.window-seconds, default 10; 0 keeps every window at the preloaded
     * job count). A fixed job count gives a faster consumer a shorter window: naive's lasted 3-7 s against poison-guard's
     * 12-16 s, and a short window of a JVM still compiling made naive's rate, the denominator of every ratio, the noisiest
     * figure of the table (two same-code runs ten minutes apart: 1363 and 864 msgs/s).
     */
    /**
     * The flight recordings' settings (-Dbench.jfr=true): JFR's profiling set, plus JDK 25's CPU-time samples, which count
     * only the CPU a thread used (execution samples also count a thread that waits for a core).
     */
    private static final String JFR_SETTINGS = ",settings=profile,jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=5ms";

    static final double WINDOW_SECONDS = Double.parseDouble(System.getProperty("bench.window-seconds", "10"));

    /**
     * Whether a warm-up whose steps' JIT shares (oldest first) are {@code shares} has settled: each of the last
     * {@code steps} under {@code line}. A step whose share could not be read (NaN: no compiler counters) counts as
     * settled, so a JVM without them is warmed its fixed count only.
     */
    static boolean quiet(List<Double> shares, int steps, double line) {
        if (!shares.isEmpty() && Double.isNaN(shares.get(shares.size() - 1))) {
            return true;
        }
        if (shares.size() < steps) {
            return false;
        }
        return shares.subList(shares.size() - steps, shares.size()).stream().allMatch(s -> s < line);
    }

    /**
     * The reads the bench makes of a consumer as its window opens and closes (poison-guard's metrics page, a baseline's
     * request counts). The warm-up makes them too, once a step: poison-guard's windows were compiling at 11-18% of its
     * CPU after warm-ups whose last three steps were under 5%, and the first scrape of its metrics page came as each
     * window opened, so whatever that first rendering compiled ran in the window (thirtieth table).
     */
    @FunctionalInterface
    interface WindowReads {
        void read() throws Exception;
    }

    /**
     * Drains at least {@code warmup} jobs, then {@link #SETTLE_STEP} more at a time (each added behind the backlog, so the
     * window still starts on a full one) until the consumer's JIT compiler threads used under {@link #SETTLE_JIT} of its
     * CPU over each of the last {@link #SETTLE_STEPS} steps, or {@code max} jobs. A fixed count measures each consumer at a different point of its
     * compiling: the larger the code path, the more of the window goes to the compiler. Returns the jobs drained.
     * <p>
     * It also sizes the window by time ({@link #WINDOW_SECONDS}): from a few steps before the warm-up ends, it times each
     * step and tops the backlog up behind the warm-up, so the window holds at least as many jobs as the consumer drains in
     * that many seconds at its latest step's rate. The top-ups are sent while warm-up jobs are still ahead of them, so the
     * window neither pays for sending them nor starts on a backlog still being sent. Each step ends with {@code reads}.
     */
    private static WarmUp warmUp(SqsClient sqs, String noticesUrl, Backlog backlog, long pid, int warmup, int max, WindowReads reads)
            throws Exception {
        int step = Math.min(SETTLE_STEP, warmup);
        // Each step is added behind the backlog when the last one is done: the backlog left (the window's jobs) must
        // outlast sending it, or the consumer would sit idle and the step measure its compiler alone.
        int window = backlog.sent.size() - warmup;
        boolean settle = step > 0 && max > warmup && window >= 2 * step;
        boolean timed = WINDOW_SECONDS > 0 && step > 0 && warmup >= 2 * step;
        if (!settle && !timed) {
            awaitNotices(sqs, noticesUrl, backlog.notices(warmup), Duration.ofMinutes(10));
            reads.read();
            return new WarmUp(warmup, Warmth.FIXED);
        }
        // Timing starts up to three steps early, so a top-up has two steps of warm-up to be sent behind.
        int done = warmup - (timed ? Math.min(3, warmup / step) : 1) * step;
        awaitNotices(sqs, noticesUrl, backlog.notices(done), Duration.ofMinutes(10));
        long at = System.nanoTime();
        double compiler = compilerMs(pid);
        double cpu = cpuMs(pid);
        List<Double> shares = new ArrayList<>();
        while (true) {
            done += step;
            awaitNotices(sqs, noticesUrl, backlog.notices(done), Duration.ofMinutes(10));
            reads.read();
            long now = System.nanoTime();
            double compilerNow = compilerMs(pid);
            double cpuNow = cpuMs(pid);
            double share = (compilerNow - compiler) / Math.max(1, cpuNow - cpu);
            double rate = step / Math.max(0.001, (now - at) / 1e9);
            boolean warm = done >= warmup;
            if (warm) {
                System.out.printf(Locale.ROOT, "[bench] warm-up: %d jobs, the JIT %.0f%% of the consumer's CPU over the last %d (%.0f jobs/s)%n",
                        done, share * 100, step, rate);
            }
            shares.add(share);
            boolean quiet = quiet(shares, SETTLE_STEPS, SETTLE_JIT);
            if (warm && (!settle || quiet || done + step > max)) {
                return new WarmUp(done, !settle ? Warmth.FIXED : quiet ? Warmth.SETTLED : Warmth.CAPPED);
            }
            int topUp = timed ? windowTopUp(window, rate) : 0;
            window += topUp;
            if (topUp > 0 || warm) {
                backlog.add((warm ? step : 0) + topUp);
            }
            at = now;
            compiler = compilerNow;
            cpu = cpuNow;
        }
    }

    /**
     * Jobs to add so a window of {@code window} jobs lasts {@link #WINDOW_SECONDS} at {@code rate} jobs/s (whole batches of
     * ten; a window of at most 200000, so a mismeasured step cannot flood the emulators).
     */
    static int windowTopUp(int window, double rate) {
        long want = (long) Math.ceil(rate * WINDOW_SECONDS / 10) * 10;
        return (int) Math.max(0, Math.min(200_000, want) - window);
    }

    private static Result runNaive(Emulators emulators, SqsClient sqs, DynamoDbClient dynamo, SqsClient countedSqs, DynamoDbClient countedDynamo, String name,
                                   int concurrency, int jobs, int warmup, NaiveConsumer.Mode mode) throws Exception {
        return runNaive(emulators, sqs, dynamo, countedSqs, countedDynamo, name, concurrency, jobs, warmup, WARMUP_MAX, mode);
    }

    private static Result runNaive(Emulators emulators, SqsClient sqs, DynamoDbClient dynamo, SqsClient countedSqs, DynamoDbClient countedDynamo, String name,
                                   int concurrency, int jobs, int warmup, int maxWarmup, NaiveConsumer.Mode mode) throws Exception {
        Names names = new Names("bn" + UUID.randomUUID().toString().substring(0, 8));
        try {
            return runNaive(emulators, sqs, dynamo, countedSqs, countedDynamo, names, name, concurrency, jobs, warmup, maxWarmup, mode);
        } finally {
            discard(sqs, dynamo, names);
        }
    }

    private static Result runNaive(Emulators emulators, SqsClient sqs, DynamoDbClient dynamo, SqsClient countedSqs, DynamoDbClient countedDynamo,
                                   Names names, String name, int concurrency, int jobs, int warmup, int maxWarmup, NaiveConsumer.Mode mode) throws Exception {
        String table = null;
        if (mode.writes()) {
            table = names.prefix() + "-idempotency";
            String t = table;
            dynamo.createTable(b -> b.tableName(t).billingMode(BillingMode.PAY_PER_REQUEST)
                    .keySchema(KeySchemaElement.builder().attributeName("jobId").keyType(KeyType.HASH).build())
                    .attributeDefinitions(AttributeDefinition.builder().attributeName("jobId").attributeType(ScalarAttributeType.S).build()));
            dynamo.waiter().waitUntilTableExists(b -> b.tableName(t));
        }
        Backlog backlog = preload(sqs, names, warmup + jobs, 0);
        Map<String, Long> sent = backlog.sent;
        String jobsUrl = sqs.getQueueUrl(b -> b.queueName(names.jobsQueue())).queueUrl();
        String noticesUrl = sqs.getQueueUrl(b -> b.queueName(names.noticesQueue())).queueUrl();
        if (!Boolean.getBoolean("bench.in-process-baselines")) {
            // Like poison-guard, the baseline is a fresh JVM of its own (same heap, same warm-up backlog), and its CPU is
            // the whole process's: neither side is measured on a JVM the other has warmed.
            try (BaselineProcess p = BaselineProcess.start(emulators, jobsUrl, noticesUrl, table, concurrency, name, mode)) {
                WarmUp warmed = warmUp(sqs, noticesUrl, backlog, p.pid(), warmup, maxWarmup, p::counts);
                long from = System.currentTimeMillis();
                Map<String, Long> before = p.counts();
                CpuWindow cpu = CpuWindow.open(p.pid(), emulators.dynalitePid());
                long[] counted = depthCounts();
                awaitNotices(sqs, noticesUrl, backlog.healthy(), Duration.ofMinutes(10));
                printDepthCounts(name, concurrency, counted, warmed);
                Map<String, Long> requests = delta(before, p.counts());
                return measured(name, concurrency, sqs, noticesUrl, sent, requests, cpu.close(), from, warmed);
            }
        }
        // -Dbench.in-process-baselines=true: the earlier method, the baseline's threads inside this (long-warmed) JVM.
        NaiveConsumer consumer = new NaiveConsumer(countedSqs, countedDynamo, jobsUrl, noticesUrl, table, mode);
        List<Thread> threads = consumer.start(concurrency);
        awaitNotices(sqs, noticesUrl, warmup, Duration.ofMinutes(10));
        // The measured window starts here.
        long from = System.currentTimeMillis();
        Map<String, Long> before = AwsRequestCounter.snapshot();
        long cpu0 = consumer.cpuNanos(threads);
        double emulator0 = cpuMs(emulators.dynalitePid());
        awaitNotices(sqs, noticesUrl, warmup + jobs, Duration.ofMinutes(10));
        Map<String, Long> requests = delta(before, AwsRequestCounter.snapshot());
        long cpu = consumer.cpuNanos(threads) - cpu0;
        double emulator = cpuMs(emulators.dynalitePid()) - emulator0;
        consumer.stop(threads);
        // The consumer's threads share this JVM with ElasticMQ: neither its JIT nor the SQS emulator's CPU can be told apart.
        return measured(name, concurrency, sqs, noticesUrl, sent, requests, new CpuSpent(cpu / 1e6, Double.NaN, emulator, Double.NaN), from,
                new WarmUp(warmup, Warmth.FIXED));
    }

    /**
     * The JVM options every consumer process starts with, the baselines' and poison-guard's alike, besides the heap
     * (-Xmx256m): by default the collector the service's container image runs it with. The image's launcher
     * (run-java.sh in the UBI OpenJDK runtime image, src/main/docker/Dockerfile.jvm) selects the parallel collector;
     * left to itself the JVM picks G1 on a machine of two cores and 2 GB or more, which cost poison-guard 11-22% more
     * CPU per message here (BENCHMARKS.md, twenty-second table). Every consumer gets the same options, so the
     * comparison stays between the consumers, not their collectors. {@code -Dbench.jvm-options=' '} (blank) runs them
     * with the JVM's own choice.
     */
    static final List<String> CONSUMER_JVM = jvmOptions("bench.jvm-options", "-XX:+UseParallelGC");

    private static List<String> jvmOptions(String property) {
        return jvmOptions(property, "");
    }

    private static List<String> jvmOptions(String property, String fallback) {
        return List.of(System.getProperty(property, fallback).trim().split("\\s+")).stream().filter(o -> !o.isBlank()).toList();
    }

    /** {@code key=value,key=value} from a system property, in order. */
    private static Map<String, String> options(String property) {
        Map<String, String> o = new java.util.LinkedHashMap<>();
        for (String kv : System.getProperty(property, "").split(",")) {
            if (kv.contains("=")) {
                o.put(kv.substring(0, kv.indexOf('=')).trim(), kv.substring(kv.indexOf('=') + 1).trim());
            }
        }
        return o;
    }

    private static Result runService(Emulators emulators, SqsClient sqs, DynamoDbClient dynamo, String name, int concurrency, int jobs,
                                     int warmup, double poisonPercent, Map<String, String> settings, List<String> jvm) throws Exception {
        Names names = new Names("bp" + UUID.randomUUID().toString().substring(0, 8));
        try {
            return runService(emulators, sqs, names, name, concurrency, jobs, warmup, poisonPercent, settings, jvm);
        } finally {
            discard(sqs, dynamo, names);
        }
    }

    /**
     * Deletes a finished run's queues and tables. Both emulators keep everything in memory: left in place, every
     * run's items and notices would pile up, and the emulators' garbage collection would tax each later run more.
     */
    private static void discard(SqsClient sqs, DynamoDbClient dynamo, Names names) {
        for (String url : sqs.listQueues(b -> b.queueNamePrefix(names.prefix())).queueUrls()) {
            sqs.deleteQueue(b -> b.queueUrl(url));
        }
        for (String table : dynamo.listTablesPaginator(b -> b.limit(100)).tableNames()) {
            if (table.startsWith(names.prefix() + "-")) {
                dynamo.deleteTable(b -> b.tableName(table));
            }
        }
    }

    private static Result runService(Emulators emulators, SqsClient sqs, Names names, String name, int concurrency, int jobs, int warmup,
                                     double poisonPercent, Map<String, String> settings, List<String> jvm) throws Exception {
        Backlog backlog = preload(sqs, names, warmup + jobs, poisonPercent);
        Map<String, String> o = new HashMap<>();
        o.put("poison-guard.prefix", names.prefix());
        o.put("poison-guard.consumer.concurrency", Integer.toString(concurrency));
        o.put("poison-guard.consumer.receive-wait", "1s");
        o.put("poison-guard.failure.permanent.max-attempts", "1");
        o.put("poison-guard.monitoring.refresh", "1h");
        o.put("poison-guard.dead-letter.sweep-interval", "1h");
        // The example's simulated provider has a quota (15 calls/s by default) that its pacer holds calls to; the
        // baselines call the same provider without a pacer, so the quota is raised out of the way here.
        o.put("poison-guard.example.provider.rate", "10000");
        // At this rate 1% poison is well over a hundred quarantines a minute, which the systemic-failure guard
        // (20 a minute by default) takes for a systemic fault and pauses on: raised here, so the run measures
        // what handling the poison costs, not the guard's pause (that is measured by SystemicFailureTest).
        o.put("poison-guard.systemic.max-quarantines", "100000");
        o.put("poison-guard.systemic.same-signature", "1000");
        // -Dbench.service-options=key=value,key=value: poison-guard settings to try (printed with the report).
        o.putAll(settings);
        Path logs = Files.createDirectories(Path.of("target", "bench-logs"));
        ServiceProcess service = new ServiceProcess(names.prefix(), emulators, o, logs);
        jvm.forEach(service::jvmOption);
        service.launcher(launcher());
        if (Boolean.getBoolean("bench.jfr")) {
            // -Dbench.jfr=true: a flight recording of each poison-guard run, to see where its CPU goes.
            service.jvmOption("-XX:StartFlightRecording=filename=" + logs.toAbsolutePath().resolve(names.prefix() + ".jfr") + JFR_SETTINGS);
        }
        String noticesUrl = sqs.getQueueUrl(b -> b.queueName(names.noticesQueue())).queueUrl();
        service.start();
        try {
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (!service.ready()) {
                if (System.nanoTime() > deadline || !service.alive()) {
                    throw new IllegalStateException("poison-guard did not boot; see " + service.log());
                }
                Thread.sleep(100);
            }
            // The window starts once the warm-up backlog is done: boot and warm-up are not counted.
            int port = service.managementPort();
            WarmUp warmed = warmUp(sqs, noticesUrl, backlog, service.pid(), warmup, WARMUP_MAX, () -> scrape(port));
            long from = System.currentTimeMillis();
            Map<String, Long> before = scrape(port);
            CpuWindow cpu = CpuWindow.open(service.pid(), emulators.dynalitePid());
            long[] counted = depthCounts();
            awaitNotices(sqs, noticesUrl, backlog.healthy(), Duration.ofMinutes(10));
            printDepthCounts(name, concurrency, counted, warmed);
            String dlq = sqs.getQueueUrl(b -> b.queueName(names.deadLetterQueue())).queueUrl();
            awaitDepth(sqs, dlq, backlog.poison(), Duration.ofMinutes(2));
            CpuSpent spent = cpu.close();
            Map<String, Long> requests = delta(before, scrape(port));
            return measured(name, concurrency, sqs, noticesUrl, backlog.sent, requests, spent, from, warmed);
        } finally {
            service.stop();
        }
    }

    /**
     * Reads every notice: the rate is messages over the span from the first to the last notice (counting
     * only those sent after {@code from}, for the service: boot is not measured), latency is notice time
     * minus the job's send time.
     */
    private static Result measured(String name, int concurrency, SqsClient sqs, String noticesUrl, Map<String, Long> sent,
                                   Map<String, Long> requests, CpuSpent cpu, long from, WarmUp warmedUp) {
        List<long[]> notices = new ArrayList<>();
        // Each notice once: draining a long warm-up's notices (250000) took longer than the queue's 30 s visibility
        // timeout, so the first ones received came back while the drain went on, and a window counted its notices five
        // or six times (naive@32 at 14178 msgs/s with 0.14 SendMessage a message, 2026-12-07). They are hidden for the
        // rest of the run and counted by message id.
        java.util.Set<String> seen = new java.util.HashSet<>();
        while (true) {
            List<Message> batch = sqs.receiveMessage(b -> b.queueUrl(noticesUrl).maxNumberOfMessages(10).waitTimeSeconds(0).visibilityTimeout(43200)
                    .messageAttributeNames("All").messageSystemAttributeNames(MessageSystemAttributeName.SENT_TIMESTAMP)).messages();
            if (batch.isEmpty()) {
                break;
            }
            for (Message m : batch) {
                if (!seen.add(m.messageId())) {
                    continue;
                }
                long at = Long.parseLong(m.attributes().get(MessageSystemAttributeName.SENT_TIMESTAMP));
                Long s = sent.get(m.messageAttributes().get("job-id").stringValue());
                notices.add(new long[]{at, s == null ? at : at - s});
            }
        }
        List<long[]> window = notices.stream().filter(n -> n[0] >= from).sorted((a, b) -> Long.compare(a[0], b[0])).toList();
        double seconds = Math.max(0.001, (window.get(window.size() - 1)[0] - window.get(0)[0]) / 1000.0);
        List<Long> latencies = window.stream().map(n -> n[1]).sorted().toList();
        return new Result(name, concurrency, window.size(), seconds, requests, cpu.consumerMs() / window.size(),
                cpu.consumerMs() > 0 ? cpu.compilerMs() / cpu.consumerMs() : Double.NaN, cpu.dynaliteMs() / window.size(), cpu.benchMs() / window.size(),
                latencies.get(latencies.size() / 2), latencies.get((int) Math.min(latencies.size() - 1, Math.ceil(latencies.size() * 0.99) - 1)),
                warmedUp.jobs(), warmedUp.warmth());
    }

    private static void awaitNotices(SqsClient sqs, String url, int n, Duration max) throws InterruptedException {
        awaitDepth(sqs, url, n, max);
    }

    /**
     * Waits until {@code url} holds at least {@code n} messages. ElasticMQ counts a queue's messages by walking all of
     * them, inside the actor that also takes the queue's sends: on a notices queue holding a long warm-up's notices
     * (200000) one count took 29 ms of wall time and 40 ms of CPU against 5 and 8 at 10000 (measured on this kind of
     * machine, 2026-12-07). Asked every 200 ms, as until then, that is a share of the rig's CPU, and a stall of the
     * consumer's notice sends, that grows with the warm-up, and the longest warm-up is the consumer measured last to
     * settle. So the pause after each count is half the time the last counts' rate says the rest will take (at least
     * {@link DepthPacing#MIN_PAUSE}, at most {@link DepthPacing#MAX_PAUSE}): a ten-second window is counted about ten
     * times instead of fifty, and the end is still seen within {@link DepthPacing#MIN_PAUSE}.
     */
    private static void awaitDepth(SqsClient sqs, String url, int n, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        Queues queues = new Queues(sqs, null);
        int last = -1;
        long lastAt = 0;
        while (true) {
            long t0 = System.nanoTime();
            int depth = queues.depthOf(url);
            long now = System.nanoTime();
            DEPTH_COUNTS.increment();
            DEPTH_COUNT_NANOS.add(now - t0);
            if (depth >= n) {
                return;
            }
            if (now > deadline) {
                throw new IllegalStateException("fewer than " + n + " messages on " + url + " within " + max);
            }
            double rate = last < 0 ? Double.NaN : (depth - last) / Math.max(1e-9, (now - lastAt) / 1e9);
            Thread.sleep(DepthPacing.pause(n - depth, rate));
            last = depth;
            lastAt = now;
        }
    }

    private static long[] depthCounts() {
        return new long[]{DEPTH_COUNTS.sum(), DEPTH_COUNT_NANOS.sum()};
    }

    /** What the bench's own counting of the notices cost in a window: the queue then held the warm-up's notices too. */
    private static void printDepthCounts(String name, int concurrency, long[] before, WarmUp warmed) {
        long[] now = depthCounts();
        System.out.printf(Locale.ROOT, "[bench] %s@%d window: %d depth counts of the notices queue, %.0f ms in all (the queue held the %d warm-up notices too)%n",
                name, concurrency, now[0] - before[0], (now[1] - before[1]) / 1e6, warmed.jobs());
    }

    /** Counts of a queue's depth the bench made, and their wall time: read around a window, to report what it asked. */
    static final java.util.concurrent.atomic.LongAdder DEPTH_COUNTS = new java.util.concurrent.atomic.LongAdder();
    static final java.util.concurrent.atomic.LongAdder DEPTH_COUNT_NANOS = new java.util.concurrent.atomic.LongAdder();

    /** How long to wait before counting a queue again, from what is left and the rate it is filling at. */
    static final class DepthPacing {
        static final Duration MIN_PAUSE = Duration.ofMillis(200);
        static final Duration MAX_PAUSE = Duration.ofSeconds(2);

        private DepthPacing() {
        }

        /** {@code rate} in messages a second, NaN before a second count; a queue not filling is counted at the longest pause. */
        static Duration pause(int left, double rate) {
            if (Double.isNaN(rate)) {
                return MIN_PAUSE;
            }
            if (rate <= 0) {
                return MAX_PAUSE;
            }
            long half = (long) (left / rate * 1e9 / 2);
            return Duration.ofNanos(Math.max(MIN_PAUSE.toNanos(), Math.min(MAX_PAUSE.toNanos(), half)));
        }
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((k, v) -> {
            long n = v - before.getOrDefault(k, 0L);
            if (n > 0) {
                d.put(k, n);
            }
        });
        return d;
    }

    private static Map<String, Long> scrape(int port) throws IOException, InterruptedException {
        String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Long> out = new TreeMap<>();
        Matcher m = REQUESTS.matcher(text);
        while (m.find()) {
            out.put(m.group(2) + "." + m.group(1), (long) Double.parseDouble(m.group(3)));
        }
        Matcher o = OUTCOMES.matcher(text);
        while (o.find()) {
            out.merge("Outcome." + o.group(1), (long) Double.parseDouble(o.group(2)), Long::sum);
        }
        return out;
    }

    /** A baseline consumer running as a process of its own ({@link NaiveConsumer#main}). */
    private static final class BaselineProcess implements AutoCloseable {
        private final Process process;
        private final java.io.BufferedReader out;
        private final java.io.Writer in;

        private BaselineProcess(Process process) {
            this.process = process;
            this.out = process.inputReader(StandardCharsets.UTF_8);
            this.in = process.outputWriter(StandardCharsets.UTF_8);
        }

        static BaselineProcess start(Emulators emulators, String jobsUrl, String noticesUrl, String table, int threads, String name,
                                     NaiveConsumer.Mode mode) throws IOException {
            Path logs = Files.createDirectories(Path.of("target", "bench-logs"));
            List<String> cmd = new ArrayList<>(launcher());
            cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m"));
            cmd.addAll(CONSUMER_JVM);
            if (Boolean.getBoolean("bench.jfr")) {
                // The baselines' recordings, beside poison-guard's, to compare where each one's CPU goes.
                cmd.add("-XX:StartFlightRecording=filename=" + logs.toAbsolutePath().resolve(name.replace(' ', '-') + "-" + threads + ".jfr")
                        + JFR_SETTINGS);
            }
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NaiveConsumer.class.getName(),
                    emulators.sqsEndpoint(), emulators.dynamoEndpoint(), jobsUrl, noticesUrl, table == null ? "-" : table, Integer.toString(threads),
                    mode.label));
            return new BaselineProcess(new ProcessBuilder(cmd)
                    .redirectError(logs.resolve(name.replace(' ', '-') + "-" + threads + ".err").toFile()).start());
        }

        long pid() {
            return process.pid();
        }

        /** Requests this process has put on the wire so far, by {@code service.operation}. */
        Map<String, Long> counts() throws IOException {
            in.write("counts\n");
            in.flush();
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith("counts ")) {
                    Map<String, Long> m = new TreeMap<>();
                    for (String kv : line.substring("counts ".length()).split(",")) {
                        if (!kv.isBlank()) {
                            m.put(kv.substring(0, kv.indexOf('=')), Long.parseLong(kv.substring(kv.indexOf('=') + 1)));
                        }
                    }
                    return m;
                }
            }
            throw new IllegalStateException("the baseline process ended without reporting its counts");
        }

        @Override
        public void close() throws IOException {
            try {
                in.write("stop\n");
                in.flush();
                if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            } catch (IOException gone) {
                process.destroyForcibly();
            }
        }
    }

    /** CPU spent in a window, in ms: the consumer process, its JIT compiler threads (part of the former), dynalite, this JVM. */
    record CpuSpent(double consumerMs, double compilerMs, double dynaliteMs, double benchMs) {
    }

    /**
     * {@code -Dbench.window-hook=command}: runs {@code command start|stop <pid>} as each window opens and closes (and
     * waits for it), for example to attach a profiler to the consumer for exactly the window measured.
     */
    static void hook(String what, long pid) {
        String command = System.getProperty("bench.window-hook", "");
        if (command.isBlank()) {
            return;
        }
        try {
            new ProcessBuilder("sh", "-c", command + " " + what + " " + pid).inheritIO().start().waitFor();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record CpuWindow(long consumer, long dynalite, double consumer0, double compiler0, double dynalite0, double bench0) {
        static CpuWindow open(long consumer, long dynalite) {
            checkNice(consumer);
            niceOf(dynalite).ifPresent(DYNALITE_NICE::add);
            hook("start", consumer);
            return new CpuWindow(consumer, dynalite, cpuMs(consumer), compilerMs(consumer), cpuMs(dynalite), cpuMs(ProcessHandle.current().pid()));
        }

        CpuSpent close() {
            hook("stop", consumer);
            return new CpuSpent(cpuMs(consumer) - consumer0, Math.max(0, compilerMs(consumer) - compiler0), cpuMs(dynalite) - dynalite0,
                    cpuMs(ProcessHandle.current().pid()) - bench0);
        }
    }

    /**
     * CPU the JIT compiler threads of process {@code pid} have used so far, in ms, from Linux's per-thread counters
     * ({@code /proc/<pid>/task/<tid>/stat}, in clock ticks of 10 ms); NaN where there is no such file system. A JVM still
     * compiling its hot paths in the window is not yet the running consumer the table means to compare.
     */
    static double compilerMs(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        if (!Files.isDirectory(tasks)) {
            return Double.NaN;
        }
        double ms = 0;
        try (java.util.stream.Stream<Path> threads = Files.list(tasks)) {
            for (Path t : threads.toList()) {
                String stat;
                try {
                    stat = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
                } catch (IOException ended) {
                    continue;
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ms += (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10.0;
                }
            }
        } catch (IOException | RuntimeException unreadable) {
            return Double.NaN;
        }
        return ms;
    }

    private static double cpuMs(long pid) {
        return ProcessHandle.of(pid).flatMap(p -> p.info().totalCpuDuration()).map(d -> d.toNanos() / 1e6)
                .orElseThrow(() -> new IllegalStateException("no CPU time for process " + pid));
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }
}

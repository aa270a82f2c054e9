package io.poisonguard.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The packaged service (target/quarkus-app/quarkus-run.jar) running as a real child JVM against the
 * test's emulators, so crash and chaos tests can kill it for real. One instance stands for one worker
 * slot: {@link #start()} again after it died starts the next incarnation, with its own log file.
 */
public final class ServiceProcess {
    private final Map<String, String> config;
    private final Path logDir;
    private final String name;
    private Process process;
    private int starts;
    private boolean ready;

    public ServiceProcess(String name, Emulators emulators, Map<String, String> overrides, Path logDir) {
        this.name = name;
        this.logDir = logDir;
        this.config = new TreeMap<>(emulators.clientConfig());
        config.put("quarkus.http.port", "0");
        config.put("quarkus.management.port", "0");
        config.put("poison-guard.resources.create", "true");
        // These processes are driven through the queues only: no operator API, so no token verification key.
        config.put("poison-guard.ops-api.enabled", "false");
        // They run the shipped example workload (off by default in production).
        config.put("poison-guard.example.enabled", "true");
        config.put("poison-guard.worker-id", name);
        // A test-only vault key (the production profile has none and would refuse to boot).
        config.put("poison-guard.payload-vault.key", "C+in3Dx2uChb08BW4FHr0OAeC5sp0PVFBDxxHEkd00Q=");
        config.putAll(overrides);
    }

    /**
     * Settings every crash test's service shares: its own prefix, short waits and leases, and fast
     * crash ladders, so a death is noticed and retried within seconds.
     */
    public static Map<String, String> fastCrashSettings(String prefix, int concurrency) {
        Map<String, String> o = new HashMap<>();
        o.put("poison-guard.prefix", prefix);
        o.put("poison-guard.consumer.concurrency", Integer.toString(concurrency));
        o.put("poison-guard.consumer.receive-wait", "1s");
        o.put("poison-guard.consumer.visibility-timeout", "3s");
        o.put("poison-guard.consumer.heartbeat-interval", "1s");
        // Each ledger probe keeps hidden the copies whose endings wait for the ledger: it must come within a visibility timeout.
        o.put("poison-guard.ledger-gate.probe-interval", "1s");
        for (String crashClass : new String[]{"crash", "crash-ambiguous"}) {
            o.put("poison-guard.failure." + crashClass + ".base", "200ms");
            o.put("poison-guard.failure." + crashClass + ".cap", "500ms");
        }
        return o;
    }

    public static Path jar() {
        String jar = System.getProperty("app.jar", "target/quarkus-app/quarkus-run.jar");
        Path p = Path.of(jar);
        if (!p.toFile().isFile()) {
            throw new IllegalStateException("the packaged service is missing at " + p.toAbsolutePath() + ": run 'mvn verify', not 'mvn test'");
        }
        return p;
    }

    /** The JVM flag the images and manifests run the service with: its virtual threads on one carrier. */
    public static final String ONE_CARRIER = "-Djdk.virtualThreadScheduler.parallelism=1";
    private final List<String> jvmOptions = new ArrayList<>();
    private final List<String> launcher = new ArrayList<>();

    /** What the next {@link #start()} runs the JVM under, before its own command line ({@code nice -n 10}, say). */
    public void launcher(List<String> prefix) {
        launcher.clear();
        launcher.addAll(prefix);
    }

    /** Adds a JVM option for the next {@link #start()} (a profiler, say). */
    public void jvmOption(String option) {
        jvmOptions.add(option);
    }

    /** Sets a system property for the next {@link #start()} (the running incarnation keeps what it started with). */
    public void set(String key, String value) {
        config.put(key, value);
    }

    /** Removes a system property for the next {@link #start()}. */
    public void unset(String key) {
        config.remove(key);
    }

    public String name() {
        return name;
    }

    public void start() {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        // A JVM that ran out of memory is in an unknown state (any thread may have lost its work
        // half-way, finally blocks may not have run): it must not keep consuming. Exiting lets its
        // lease expire, so the job in flight is charged a crash, and the orchestrator restarts the worker.
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        // One carrier for the worker's virtual threads, as the container image runs it (README, "Deployment and real AWS").
        cmd.add(ONE_CARRIER);
        cmd.addAll(jvmOptions);
        config.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.add("-jar");
        cmd.add(jar().toString());
        starts++;
        ready = false;
        File log = logDir.resolve(name + "-" + starts + ".log").toFile();
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public boolean alive() {
        return process != null && process.isAlive();
    }

    /**
     * Whether the current incarnation has finished booting (Quarkus logged that it is listening), read
     * from its log and remembered until the next start.
     */
    public boolean ready() {
        if (!ready && alive()) {
            try {
                ready = java.nio.file.Files.readString(log(), java.nio.charset.StandardCharsets.ISO_8859_1).contains(" Listening on: ");
            } catch (IOException e) {
                return false;
            }
        }
        return ready && alive();
    }

    /** The API port the current incarnation listens on, read from its log. */
    public int httpPort() {
        return portIn("Listening on: http://[^:]+:(\\d+)");
    }

    /** The management port (health, metrics) the current incarnation listens on, read from its log. */
    public int managementPort() {
        return portIn("Management interface listening on http://[^:]+:(\\d+)");
    }

    private int portIn(String pattern) {
        try {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(pattern)
                    .matcher(java.nio.file.Files.readString(log(), java.nio.charset.StandardCharsets.ISO_8859_1));
            if (!m.find()) {
                throw new IllegalStateException("no port matching " + pattern + " in " + log());
            }
            return Integer.parseInt(m.group(1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int exitCode() {
        return process.exitValue();
    }

    /** The operating-system process id of the current (or last) incarnation. */
    public long pid() {
        return process.pid();
    }

    public int starts() {
        return starts;
    }

    /** The log file of the current (or last) incarnation. */
    public Path log() {
        return logDir.resolve(name + "-" + starts + ".log");
    }

    /** SIGKILL on Linux: no shutdown hook, no finally block, nothing gets to run. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    public void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }
}

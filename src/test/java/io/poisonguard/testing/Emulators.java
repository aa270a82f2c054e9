package io.poisonguard.testing;

import org.elasticmq.NodeAddress;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The local AWS stand-ins: ElasticMQ (SQS, embedded in this JVM) and dynalite (DynamoDB, a Node.js
 * child process). Tests share one pair per JVM and separate themselves by name prefix; {@link #main}
 * runs the pair as a standalone process for the local demo.
 */
public final class Emulators implements AutoCloseable {
    public static final String REGION = "us-east-1";
    private static Emulators shared;

    private final SQSRestServer sqs;
    private volatile Process dynalite;
    private final int sqsPort;
    private final int dynamoPort;

    private Emulators(int sqsPort, int dynamoPort) {
        this.sqsPort = sqsPort;
        this.dynamoPort = dynamoPort;
        this.sqs = SQSRestServerBuilder.withInterface("127.0.0.1")
                .withPort(sqsPort)
                .withServerAddress(new NodeAddress("http", "localhost", sqsPort, ""))
                .withAWSRegion(REGION)
                .start();
        sqs.waitUntilStarted();
        this.dynalite = startDynalite(dynamoPort);
    }

    /** One pair for the whole JVM, stopped when it exits. */
    public static synchronized Emulators shared() {
        if (shared == null) {
            int[] ports = freePorts(2);
            shared = new Emulators(ports[0], ports[1]);
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "emulators-stop"));
        }
        return shared;
    }

    /** A pair of its own, for a test that may break it; the caller closes it. */
    static Emulators dedicated() {
        int[] ports = freePorts(2);
        return new Emulators(ports[0], ports[1]);
    }

    public String sqsEndpoint() {
        return "http://localhost:" + sqsPort;
    }

    public String dynamoEndpoint() {
        return "http://localhost:" + dynamoPort;
    }

    /** Quarkus configuration that points both AWS clients at these emulators. */
    public Map<String, String> clientConfig() {
        return Map.of(
                "quarkus.sqs.endpoint-override", sqsEndpoint(),
                "quarkus.dynamodb.endpoint-override", dynamoEndpoint(),
                "quarkus.sqs.aws.region", REGION,
                "quarkus.dynamodb.aws.region", REGION,
                "quarkus.sqs.aws.credentials.type", "static",
                "quarkus.sqs.aws.credentials.static-provider.access-key-id", "local",
                "quarkus.sqs.aws.credentials.static-provider.secret-access-key", "local",
                "quarkus.dynamodb.aws.credentials.type", "static",
                "quarkus.dynamodb.aws.credentials.static-provider.access-key-id", "local",
                "quarkus.dynamodb.aws.credentials.static-provider.secret-access-key", "local");
    }

    /**
     * Freezes DynamoDB: SIGSTOP to dynalite's Node.js process. Connections stay open and requests
     * hang, as in a brown-out or a network partition, until {@link #thawDynamo()}.
     */
    public void freezeDynamo() {
        signalDynalite("STOP");
    }

    /** Resumes a frozen dynalite (SIGCONT); requests that waited are then answered. */
    public void thawDynamo() {
        signalDynalite("CONT");
    }

    /**
     * Replaces dynalite with a fresh process on the same port: every table and item is gone, and so is whatever the old
     * process had grown. The bench gives each consumer that uses DynamoDB a fresh one, so a run does not pay for the
     * runs before it (the Node.js process's CPU per request grew from run to run within one bench, up to a fifth).
     * Clients reconnect on their next request.
     */
    public synchronized void restartDynamo() {
        Process old = dynalite;
        stopDynalite();
        try {
            if (!old.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                old.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping dynalite", e);
        }
        dynalite = startDynalite(dynamoPort);
    }

    public boolean dynaliteAlive() {
        return dynalite.isAlive();
    }

    /** The process id of dynalite's Node.js process (a child of this JVM). */
    public long dynalitePid() {
        return dynalite.pid();
    }

    private void signalDynalite(String signal) {
        if (!dynalite.isAlive()) {
            throw new IllegalStateException("dynalite is not running");
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(dynalite.pid())).redirectErrorStream(true).start();
            String out = new String(kill.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + dynalite.pid() + " failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling dynalite", e);
        }
    }

    private static Process startDynalite(int port) {
        Path dir = Path.of(System.getProperty("emulators.dir", "infra/local"));
        Path cli = dir.resolve("dynalite-server.js");
        if (!Files.isRegularFile(dir.resolve("node_modules/dynalite/cli.js"))) {
            throw new IllegalStateException("dynalite is not installed: run 'npm ci' in " + dir.toAbsolutePath()
                    + " (the Maven build does this before tests)");
        }
        try {
            List<String> cmd = new java.util.ArrayList<>();
            // -Demulators.dynalite-nice=N: dynalite under nice N (a negative N needs root; without it nice says so and runs it
            // at the inherited priority, which the bench reads back). The bench uses it to let the emulator answer first.
            int nice = Integer.getInteger("emulators.dynalite-nice", 0);
            if (nice != 0) {
                cmd.addAll(List.of("nice", "-n", Integer.toString(nice)));
            }
            cmd.addAll(List.of("node", cli.toString(), "--port", Integer.toString(port), "--createTableMs", "0",
                    "--deleteTableMs", "0", "--updateTableMs", "0"));
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.to(new File(System.getProperty("java.io.tmpdir"), "dynalite-" + port + ".log")))
                    .start();
            waitForPort(port, p, Duration.ofSeconds(30));
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start dynalite (is Node.js on the PATH?)", e);
        }
    }

    private static void waitForPort(int port, Process p, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException("dynalite exited with code " + p.exitValue() + " before listening on " + port);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
            }
        }
        throw new IllegalStateException("dynalite did not listen on port " + port + " within " + timeout);
    }

    /**
     * {@code n} distinct free ports, all held open until every one is chosen: two sockets opened and closed one after the
     * other may be given the same port, and then ElasticMQ took it, dynalite could not listen, and the DynamoDB client
     * talked to ElasticMQ (HTTP 500 at boot).
     */
    static int[] freePorts(int n) {
        List<ServerSocket> held = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0);
                s.setReuseAddress(true);
                held.add(s);
            }
            return held.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // the port is free again either way
                }
            }
        }
    }

    @Override
    public void close() {
        stopDynalite();
        sqs.stopAndWait();
    }

    /** Asks dynalite to end (SIGTERM), continuing it first if it is frozen: a stopped process would not act on it. */
    private void stopDynalite() {
        if (dynalite.isAlive()) {
            try {
                signalDynalite("CONT");
            } catch (RuntimeException e) {
                System.err.println("could not continue dynalite before stopping it: " + e.getMessage());
            }
        }
        dynalite.destroy();
    }

    /**
     * Runs both emulators until the process is stopped: {@code Emulators [sqsPort] [dynamoPort]}
     * (defaults 9324 and 8000). Used by scripts/demo.sh.
     */
    public static void main(String[] args) throws InterruptedException {
        int sqsPort = args.length > 0 ? Integer.parseInt(args[0]) : 9324;
        int dynamoPort = args.length > 1 ? Integer.parseInt(args[1]) : 8000;
        Emulators e = new Emulators(sqsPort, dynamoPort);
        Runtime.getRuntime().addShutdownHook(new Thread(e::close, "emulators-stop"));
        System.out.println("emulators ready: sqs=" + e.sqsEndpoint() + " dynamodb=" + e.dynamoEndpoint());
        new CountDownLatch(1).await();
    }
}

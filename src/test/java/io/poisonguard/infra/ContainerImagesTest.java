package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;
import io.poisonguard.config.Names;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Dockerfiles, .dockerignore and the compose file: what can be checked without a Docker engine
 * (there is none on the build machines, so no image is built here).
 */
class ContainerImagesTest {
    static final Path JVM = Infra.ROOT.resolve("src/main/docker/Dockerfile.jvm");
    static final Path NATIVE = Infra.ROOT.resolve("src/main/docker/Dockerfile.native");
    static final Path COMPOSE = Infra.ROOT.resolve("infra/compose/compose.yaml");

    /** One Dockerfile instruction, continuation lines joined. */
    record Instruction(String keyword, String arguments) {
    }

    private static JsonNode compose;
    private static ConfigKeys config;

    @BeforeAll
    static void load() {
        compose = Yaml.read(COMPOSE);
        config = ConfigKeys.load();
    }

    @Test
    void theJvmImageCopiesTheFastJarLayoutAndRunsItAsANonRootUser() {
        List<Instruction> jvm = instructions(JVM);
        assertEquals(List.of("target/quarkus-app/lib/", "target/quarkus-app/*.jar", "target/quarkus-app/app/", "target/quarkus-app/quarkus/"),
                copySources(jvm));
        assertEquals("/deployments/quarkus-run.jar", env(jvm, "JAVA_APP_JAR"));
        assertNonRoot(jvm);
        assertTrue(argumentsOf(jvm, "EXPOSE").contains("8080"));
        assertTrue(env(jvm, "JAVA_OPTS_APPEND").contains("-XX:+ExitOnOutOfMemoryError"), "a JVM out of memory exits");
        assertTrue(env(jvm, "JAVA_OPTS_APPEND").contains(io.poisonguard.testing.ServiceProcess.ONE_CARRIER),
                "the worker's virtual threads on one carrier, as the tests' service processes run");
        assertEquals("-XX:+UseParallelGC", env(jvm, "GC_CONTAINER_OPTIONS"), "the throughput collector, pinned");
        assertTrue(argumentsOf(jvm, "HEALTHCHECK").contains("/q/health/live"), "HEALTHCHECK on the liveness path");
        assertTrue(argumentsOf(jvm, "HEALTHCHECK").contains("127.0.0.1/9000"), "HEALTHCHECK on the management port");
        assertTrue(argumentsOf(jvm, "EXPOSE").contains("9000"), "the management port is declared");
    }

    @Test
    void theJvmImageCopiesWhatThePackageBuildProduces() {
        Path app = Infra.ROOT.resolve("target/quarkus-app");
        // Only after ./mvnw package; a test-only run has no target/quarkus-app and nothing to compare.
        if (Files.isDirectory(app)) {
            for (String source : copySources(instructions(JVM))) {
                PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + source.replaceAll("/$", ""));
                try (var files = Files.list(app)) {
                    assertTrue(files.anyMatch(f -> m.matches(Infra.ROOT.relativize(f))), source + " matches nothing in " + app);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    @Test
    void theNativeImageRunsTheRunnerAsANonRootUserOnAllInterfaces() {
        List<Instruction> in = instructions(NATIVE);
        assertEquals(List.of("target/*-runner"), copySources(in));
        assertNonRoot(in);
        assertTrue(argumentsOf(in, "ENTRYPOINT").contains("-Dquarkus.http.host=0.0.0.0"));
        assertTrue(argumentsOf(in, "ENTRYPOINT").contains(io.poisonguard.testing.ServiceProcess.ONE_CARRIER), "one carrier, as the JVM image");
    }

    @Test
    void theDockerignoreLetsInTheBuildOutputAndNothingElse() {
        List<String> rules = dockerignore();
        List<String> sources = new ArrayList<>(copySources(instructions(JVM)));
        sources.addAll(copySources(instructions(NATIVE)));
        for (String source : sources) {
            String example = source.replace("*", "x") + (source.endsWith("/") ? "x" : "");
            assertTrue(included(rules, example), source + " (e.g. " + example + ") is excluded by .dockerignore");
        }
        for (String outside : List.of("src/main/java/io/poisonguard/Boot.java", "infra/local/node_modules/x", "target/dev-keys/private.pem",
                "target/classes/application.properties", ".git/config")) {
            assertFalse(included(rules, outside), outside + " would be sent to the Docker daemon");
        }
    }

    @Test
    void composeRunsTheServiceAgainstLocalStackOrFlociUnderOneName() {
        JsonNode services = compose.path("services");
        for (String emulator : List.of("localstack", "floci")) {
            JsonNode s = services.path(emulator);
            assertEquals(List.of(emulator), texts(s.path("profiles")), emulator + " runs only in its own profile");
            assertTrue(texts(s.path("networks").path("default").path("aliases")).contains("aws"), emulator + " answers as aws");
        }
        JsonNode service = services.path("poison-guard");
        assertEquals(Set.of("localstack", "floci"), new TreeSet<>(texts(service.path("profiles"))));
        JsonNode env = service.path("environment");
        assertEquals("http://aws:4566", env.path(ConfigKeys.env("quarkus.sqs.endpoint-override")).asText());
        assertEquals("http://aws:4566", env.path(ConfigKeys.env("quarkus.dynamodb.endpoint-override")).asText());
        assertEquals("true", env.path(ConfigKeys.env("poison-guard.resources.create")).asText(), "the service creates its resources");
        assertEquals(Infra.ROOT, COMPOSE.getParent().resolve(service.path("build").path("context").asText()).normalize());
        assertEquals("src/main/docker/Dockerfile.jvm", service.path("build").path("dockerfile").asText());
    }

    @Test
    void theLocalStackTokenComesOnlyFromTheEnvironment() {
        String token = compose.path("services").path("localstack").path("environment").path("LOCALSTACK_AUTH_TOKEN").asText();
        assertTrue(token.matches("\\$\\{LOCALSTACK_AUTH_TOKEN(:?-)?}"), "LOCALSTACK_AUTH_TOKEN must be interpolated, not written: " + token);
    }

    @Test
    void composeSetsOnlyVariablesTheServiceReads() {
        List<String> problems = new ArrayList<>();
        compose.path("services").path("poison-guard").path("environment").fieldNames()
                .forEachRemaining(n -> config.unknownVariable(n).ifPresent(problems::add));
        assertEquals(List.of(), problems);
    }

    @Test
    void composeWaitsForAGracefulShutdownAndProbesReadiness() {
        JsonNode service = compose.path("services").path("poison-guard");
        Duration stop = ConfigKeys.duration(service.path("stop_grace_period").asText("10s"));
        assertEquals(Optional.empty(), KubernetesManifestsTest.graceProblem(stop.toSeconds(),
                ConfigKeys.duration(config.defaultOf("poison-guard.consumer.shutdown-grace")),
                ConfigKeys.duration(config.defaultOf("poison-guard.consumer.receive-wait"))), "stop_grace_period");
        assertTrue(texts(service.path("healthcheck").path("test")).toString().contains("/q/health/ready"));
        assertTrue(texts(service.path("healthcheck").path("test")).toString().contains("127.0.0.1/9000"), "health is on the management port");
    }

    @Test
    void composeMountsTheOperatorApiKeyWhereTheServiceLooksForIt() {
        JsonNode service = compose.path("services").path("poison-guard");
        String location = service.path("environment").path("MP_JWT_VERIFY_PUBLICKEY_LOCATION").asText();
        List<String> targets = new ArrayList<>();
        service.path("volumes").forEach(v -> targets.add(v.path("target").asText()));
        assertTrue(targets.contains(location), location + " is not mounted: " + targets);
    }

    @Test
    void theComposeReadmeDocumentsTheLocalStackProfile() throws IOException {
        String readme = Files.readString(COMPOSE.resolveSibling("README.md"));
        for (String needed : List.of("./mvnw verify -Plocalstack", "LOCALSTACK_AUTH_TOKEN", "LOCALSTACK_IMAGE", "--profile floci",
                "--profile localstack", new Names("poison-guard").jobsQueue())) {
            assertTrue(readme.contains(needed), "infra/compose/README.md does not mention " + needed);
        }
    }

    // ------------------------------------------------------------------------------------------

    static List<Instruction> instructions(Path dockerfile) {
        List<String> lines;
        try {
            lines = Files.readAllLines(dockerfile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Instruction> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : lines) {
            String trimmed = line.strip();
            if (current.isEmpty() && (trimmed.isEmpty() || trimmed.startsWith("#"))) {
                continue;
            }
            if (trimmed.endsWith("\\")) {
                current.append(trimmed, 0, trimmed.length() - 1).append(' ');
                continue;
            }
            current.append(trimmed);
            String text = current.toString().strip();
            int space = text.indexOf(' ');
            out.add(new Instruction(text.substring(0, space).toUpperCase(), text.substring(space + 1).strip()));
            current.setLength(0);
        }
        return out;
    }

    /** The sources of every COPY, flags left out. */
    static List<String> copySources(List<Instruction> instructions) {
        List<String> out = new ArrayList<>();
        for (Instruction i : instructions) {
            if (i.keyword().equals("COPY")) {
                List<String> words = new ArrayList<>(Arrays.asList(i.arguments().split("\\s+")));
                words.removeIf(w -> w.startsWith("--"));
                out.addAll(words.subList(0, words.size() - 1));
            }
        }
        return out;
    }

    private static String env(List<Instruction> instructions, String name) {
        for (Instruction i : instructions) {
            if (i.keyword().equals("ENV") && i.arguments().startsWith(name + "=")) {
                return i.arguments().substring(name.length() + 1).replace("\"", "");
            }
        }
        throw new AssertionError("no ENV " + name);
    }

    private static String argumentsOf(List<Instruction> instructions, String keyword) {
        return instructions.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments)
                .reduce((a, b) -> b).orElseThrow(() -> new AssertionError("no " + keyword));
    }

    private static void assertNonRoot(List<Instruction> instructions) {
        String user = argumentsOf(instructions, "USER");
        assertFalse(user.equals("root") || user.equals("0") || user.startsWith("0:") || user.startsWith("root:"),
                "the last USER is " + user);
        assertTrue(user.matches("[0-9]+(:[0-9a-z]+)?"), "a numeric USER lets Kubernetes verify runAsNonRoot: " + user);
    }

    private static List<String> dockerignore() {
        try {
            return Files.readAllLines(Infra.ROOT.resolve(".dockerignore")).stream()
                    .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Docker's rule: the last pattern that matches the path or one of its parents decides; {@code !} includes. */
    static boolean included(List<String> rules, String path) {
        boolean included = true;
        for (String rule : rules) {
            boolean negated = rule.startsWith("!");
            PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + (negated ? rule.substring(1) : rule));
            for (Path p = Path.of(path); p != null; p = p.getParent()) {
                if (m.matches(p)) {
                    included = negated;
                    break;
                }
            }
        }
        return included;
    }

    private static List<String> texts(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.forEach(e -> out.add(e.asText()));
        return out;
    }
}

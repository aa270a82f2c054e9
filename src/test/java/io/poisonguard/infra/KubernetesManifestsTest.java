package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.poisonguard.config.Names;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * infra/k8s fits the service: shutdown timing, health paths, configuration variables that exist,
 * values that agree with the CloudFormation stack, and a KEDA trigger on the right queue.
 */
class KubernetesManifestsTest {
    static final Path DIR = Infra.ROOT.resolve("infra/k8s");
    /** SQS's longest long poll; a receive in progress at SIGTERM may take this long to return. */
    static final Duration LONGEST_POLL = Duration.ofSeconds(20);
    /** Room for flushing buffered deletes (DeleteMessageBatch) and Quarkus's own shutdown. */
    static final Duration FLUSH_MARGIN = Duration.ofSeconds(5);
    /** How long shutdown waits for abandoned attempts to record their release (Poller.ABANDON_WAIT). */
    static final Duration RELEASE_WAIT = Duration.ofSeconds(5);

    private static Map<String, JsonNode> manifests;
    private static ConfigKeys config;
    private static Map<String, String> env;
    private static JsonNode deployment;
    private static JsonNode container;

    @BeforeAll
    static void load() {
        manifests = new LinkedHashMap<>();
        for (JsonNode resource : Yaml.read(DIR.resolve("kustomization.yaml")).path("resources")) {
            for (JsonNode doc : Yaml.readAll(DIR.resolve(resource.asText()))) {
                manifests.put(doc.path("kind").asText() + "/" + doc.path("metadata").path("name").asText(), doc);
            }
        }
        config = ConfigKeys.load();
        env = new LinkedHashMap<>();
        manifest("ConfigMap/poison-guard").path("data").properties().forEach(e -> env.put(e.getKey(), e.getValue().asText()));
        deployment = manifest("Deployment/poison-guard");
        container = deployment.path("spec").path("template").path("spec").path("containers").get(0);
    }

    @Test
    void theKustomizationListsEveryManifestButTheExamples() throws IOException {
        Set<String> listed = new TreeSet<>();
        Yaml.read(DIR.resolve("kustomization.yaml")).path("resources").forEach(r -> listed.add(r.asText()));
        Set<String> files = new TreeSet<>();
        try (Stream<Path> s = Files.list(DIR)) {
            s.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml") && !n.equals("kustomization.yaml") && !n.endsWith(".example.yaml"))
                    .forEach(files::add);
        }
        assertEquals(files, listed);
    }

    @Test
    void terminationGraceCoversTheShutdownGraceAndALongPollInProgress() {
        long grace = deployment.path("spec").path("template").path("spec").path("terminationGracePeriodSeconds").asLong(30);
        assertEquals(Optional.empty(), graceProblem(grace, setting("poison-guard.consumer.shutdown-grace"),
                setting("poison-guard.consumer.receive-wait")));
    }

    @Test
    void theGraceCheckRejectsAGraceThatCutsShutdownShort() {
        assertTrue(graceProblem(45, Duration.ofSeconds(25), LONGEST_POLL).isPresent(), "no room to flush deletes");
        assertTrue(graceProblem(30, Duration.ofSeconds(25), LONGEST_POLL).isPresent(), "Kubernetes' default of 30 s");
        assertTrue(graceProblem(50, Duration.ofSeconds(25), LONGEST_POLL).isPresent(), "no room to release unfinished attempts");
        assertFalse(graceProblem(55, Duration.ofSeconds(25), LONGEST_POLL).isPresent());
        assertFalse(graceProblem(60, Duration.ofSeconds(25), LONGEST_POLL).isPresent());
    }

    @Test
    void theJvmExitsOnOutOfMemoryErrorInThePod() {
        String opts = containerEnv("JAVA_OPTS_APPEND");
        assertTrue(opts.contains("-XX:+ExitOnOutOfMemoryError"), "JAVA_OPTS_APPEND: " + opts);
        assertTrue(opts.contains("-Dquarkus.http.host=0.0.0.0"), "the image's own flags are kept: " + opts);
        assertTrue(opts.contains(io.poisonguard.testing.ServiceProcess.ONE_CARRIER), "one carrier, as the image: " + opts);
    }

    @Test
    void thePodRunsTheCollectorTheImagePins() {
        assertEquals("-XX:+UseParallelGC", containerEnv("GC_CONTAINER_OPTIONS"));
    }

    /** The value the container's env list gives {@code name}, or "" when it has none. */
    private static String containerEnv(String name) {
        String value = "";
        for (JsonNode e : container.path("env")) {
            if (e.path("name").asText().equals(name)) {
                value = e.path("value").asText();
            }
        }
        return value;
    }

    @Test
    void probesUseTheQuarkusHealthEndpointsOnADeclaredPort() {
        assertEquals("/q/health/live", container.path("livenessProbe").path("httpGet").path("path").asText());
        assertEquals("/q/health/ready", container.path("readinessProbe").path("httpGet").path("path").asText());
        assertEquals("/q/health/live", container.path("startupProbe").path("httpGet").path("path").asText());
        Set<String> ports = containerPorts();
        for (String probe : List.of("livenessProbe", "readinessProbe", "startupProbe")) {
            String port = container.path(probe).path("httpGet").path("port").asText();
            assertEquals("management", port, probe + ": health is served on the management interface only");
        }
        assertTrue(ports.containsAll(Set.of("http", "8080", "management", "9000")), "API on 8080, management on 9000: " + ports);
        assertEquals("9000", deployment.path("spec").path("template").path("metadata").path("annotations").path("prometheus.io/port").asText(),
                "Prometheus scrapes the management port");
    }

    @Test
    void theServiceExposesOnlyTheApiAndTheNetworkPolicyKeepsTheManagementPortForMonitoring() {
        JsonNode service = manifest("Service/poison-guard");
        List<String> targets = new ArrayList<>();
        service.path("spec").path("ports").forEach(p -> targets.add(p.path("targetPort").asText()));
        assertEquals(List.of("http"), targets, "the Service carries the operator API and nothing else");
        JsonNode policy = manifest("NetworkPolicy/poison-guard");
        Map<String, String> podLabels = labels(deployment.path("spec").path("template").path("metadata").path("labels"));
        assertTrue(podLabels.entrySet().containsAll(labels(policy.path("spec").path("podSelector").path("matchLabels")).entrySet()));
        for (JsonNode rule : policy.path("spec").path("ingress")) {
            boolean management = false;
            for (JsonNode port : rule.path("ports")) {
                management |= port.path("port").asText().equals("management") || port.path("port").asText().equals("9000");
            }
            if (management) {
                assertTrue(rule.path("from").size() > 0, "the management port is open only to named sources: " + rule);
                rule.path("from").forEach(f -> assertTrue(f.has("namespaceSelector") || f.has("podSelector"), "not an IP block: " + f));
            }
            assertTrue(rule.path("ports").size() > 0, "every rule names its ports: " + rule);
        }
    }

    @Test
    void thePodRunsUnprivilegedWithAReadOnlyRootFilesystem() {
        JsonNode pod = deployment.path("spec").path("template").path("spec");
        assertTrue(pod.path("securityContext").path("runAsNonRoot").asBoolean(false), "runAsNonRoot");
        JsonNode sc = container.path("securityContext");
        assertFalse(sc.path("allowPrivilegeEscalation").asBoolean(true), "allowPrivilegeEscalation");
        assertEquals("ALL", sc.path("capabilities").path("drop").get(0).asText());
        assertTrue(sc.path("readOnlyRootFilesystem").asBoolean(false), "readOnlyRootFilesystem");
        assertTrue(mountPaths().contains("/tmp"), "the JVM needs a writable /tmp: " + mountPaths());
    }

    @Test
    void everyVariableSetsAConfigKeyTheServiceReads() {
        List<String> problems = new ArrayList<>();
        List<String> names = new ArrayList<>(env.keySet());
        container.path("env").forEach(e -> names.add(e.path("name").asText()));
        Yaml.read(DIR.resolve("secret.example.yaml")).path("stringData").fieldNames().forEachRemaining(names::add);
        names.forEach(n -> config.unknownVariable(n).ifPresent(problems::add));
        assertEquals(List.of(), problems);
    }

    @Test
    void theConfigurationAgreesWithTheCloudFormationStack() {
        Template t = Template.load();
        assertEquals(t.parameterDefault("Prefix").asText(), env.get("POISON_GUARD_PREFIX"));
        assertEquals(t.parameterDefault("QueueRetentionSeconds").asLong(),
                ConfigKeys.duration(env.get("POISON_GUARD_RESOURCES_QUEUE_RETENTION")).toSeconds(),
                "the service proves its limits within the queue's real retention");
        assertEquals(t.parameterDefault("RedriveMaxReceiveCount").asText(), env.get("POISON_GUARD_RESOURCES_REDRIVE_MAX_RECEIVE_COUNT"));
        assertEquals("false", env.get("POISON_GUARD_RESOURCES_CREATE"), "the stack creates the resources, not the service");
        assertTrue(env.keySet().stream().noneMatch(k -> k.endsWith("_ENDPOINT_OVERRIDE")), "real AWS: no endpoint overrides");
        assertEquals(env.get("AWS_REGION"), env.get("QUARKUS_SQS_AWS_REGION"));
        assertEquals(env.get("AWS_REGION"), env.get("QUARKUS_DYNAMODB_AWS_REGION"));
        String topic = env.get(ConfigKeys.env("poison-guard.alerts.sns.topic-arn"));
        if (topic != null) {
            String alerts = t.physicalName(t.ofType(Template.TOPIC).keySet().iterator().next());
            assertTrue(topic.startsWith("arn:aws:sns:" + env.get("AWS_REGION") + ":") && topic.endsWith(":" + alerts),
                    "alerts go to the stack's topic " + alerts + " in the service's region: " + topic);
        }
    }

    @Test
    void theOperatorApiKeyIsReadFromAMountedSecret() {
        String location = env.get("MP_JWT_VERIFY_PUBLICKEY_LOCATION");
        assertTrue(location != null, "MP_JWT_VERIFY_PUBLICKEY_LOCATION is not set");
        if (!location.startsWith("https:")) {
            String mount = mountPaths().stream().filter(m -> location.startsWith(m + "/")).findFirst()
                    .orElseThrow(() -> new AssertionError(location + " is under no volume mount: " + mountPaths()));
            JsonNode volume = volumeMountedAt(mount);
            String file = location.substring(mount.length() + 1);
            List<String> paths = new ArrayList<>();
            volume.path("secret").path("items").forEach(i -> paths.add(i.path("path").asText()));
            assertTrue(volume.has("secret") && paths.contains(file), location + " is not a key of the mounted secret: " + volume);
        }
    }

    @Test
    void kedaScalesTheDeploymentOnTheDepthOfTheJobsQueue() {
        JsonNode scaled = manifest("ScaledObject/poison-guard");
        assertEquals(deployment.path("metadata").path("name").asText(), scaled.path("spec").path("scaleTargetRef").path("name").asText());
        assertTrue(deployment.path("spec").path("replicas").isMissingNode(), "KEDA owns the replica count; the Deployment must not set it");
        assertTrue(scaled.path("spec").path("minReplicaCount").asInt(0) >= 1, "at least one replica keeps the API and readiness up");
        JsonNode trigger = scaled.path("spec").path("triggers").get(0);
        assertEquals("aws-sqs-queue", trigger.path("type").asText());
        String queueUrl = trigger.path("metadata").path("queueURL").asText();
        assertTrue(queueUrl.endsWith("/" + new Names(env.get("POISON_GUARD_PREFIX")).jobsQueue()), queueUrl);
        assertEquals(env.get("AWS_REGION"), trigger.path("metadata").path("awsRegion").asText());
        String auth = trigger.path("authenticationRef").path("name").asText();
        assertTrue(manifests.containsKey("TriggerAuthentication/" + auth), "no TriggerAuthentication " + auth);
    }

    @Test
    void theDisruptionBudgetAndTheServiceSelectThePods() {
        Map<String, String> podLabels = labels(deployment.path("spec").path("template").path("metadata").path("labels"));
        JsonNode pdb = manifest("PodDisruptionBudget/poison-guard");
        assertTrue(podLabels.entrySet().containsAll(labels(pdb.path("spec").path("selector").path("matchLabels")).entrySet()));
        assertTrue(pdb.path("spec").has("maxUnavailable"), "maxUnavailable, so a drain is never blocked at low replica counts");
        JsonNode service = manifest("Service/poison-guard");
        assertTrue(podLabels.entrySet().containsAll(labels(service.path("spec").path("selector")).entrySet()));
        String target = service.path("spec").path("ports").get(0).path("targetPort").asText();
        assertTrue(containerPorts().contains(target), "the Service targets port " + target);
        assertEquals("poison-guard", deployment.path("spec").path("template").path("spec").path("serviceAccountName").asText());
        assertTrue(manifests.containsKey("ServiceAccount/poison-guard"));
    }

    // ------------------------------------------------------------------------------------------

    /**
     * On SIGTERM the service stops receiving, lets the receive in progress return (up to the long-poll
     * wait), waits the shutdown grace for running handlers and flushes deletes; Kubernetes kills it
     * after terminationGracePeriodSeconds.
     */
    static Optional<String> graceProblem(long graceSeconds, Duration shutdownGrace, Duration receiveWait) {
        long needed = shutdownGrace.plus(receiveWait).plus(RELEASE_WAIT).plus(FLUSH_MARGIN).toSeconds();
        return graceSeconds >= needed ? Optional.empty()
                : Optional.of("a grace of " + graceSeconds + " s must cover shutdown-grace + receive-wait + "
                        + RELEASE_WAIT.toSeconds() + " s to release unfinished attempts + "
                        + FLUSH_MARGIN.toSeconds() + " s = " + needed + " s");
    }

    /** A setting's value as the pods get it: the ConfigMap's, else the code's default. */
    private static Duration setting(String key) {
        String value = env.get(ConfigKeys.env(key));
        return ConfigKeys.duration(value != null ? value : config.defaultOf(key));
    }

    private static JsonNode manifest(String kindAndName) {
        JsonNode m = manifests.get(kindAndName);
        if (m == null) {
            throw new AssertionError("no " + kindAndName + " in infra/k8s (found " + manifests.keySet() + ")");
        }
        return m;
    }

    private static Set<String> containerPorts() {
        Set<String> ports = new TreeSet<>();
        container.path("ports").forEach(p -> {
            ports.add(p.path("name").asText());
            ports.add(p.path("containerPort").asText());
        });
        return ports;
    }

    private static List<String> mountPaths() {
        List<String> paths = new ArrayList<>();
        container.path("volumeMounts").forEach(m -> paths.add(m.path("mountPath").asText()));
        return paths;
    }

    private static JsonNode volumeMountedAt(String path) {
        String name = null;
        for (JsonNode m : container.path("volumeMounts")) {
            if (path.equals(m.path("mountPath").asText())) {
                name = m.path("name").asText();
            }
        }
        for (JsonNode v : deployment.path("spec").path("template").path("spec").path("volumes")) {
            if (v.path("name").asText().equals(name)) {
                return v;
            }
        }
        return JsonNodeFactory.instance.objectNode();
    }

    private static Map<String, String> labels(JsonNode n) {
        Map<String, String> out = new LinkedHashMap<>();
        n.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }
}

package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.poisonguard.config.Names;
import io.poisonguard.config.Settings;
import io.poisonguard.dynamodb.TableBootstrap;
import io.poisonguard.sqs.QueueBootstrap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * infra/aws/poison-guard.yaml creates what the code expects. The expectations come from the code
 * itself: the names from {@link Names}, the keys, indexes, TTL and queue attributes from running
 * {@link TableBootstrap} and {@link QueueBootstrap} against recording clients, the defaults from the
 * config mapping. Each check is a function returning its problems, so the self-tests at the end can
 * break a copy of the template and see the check fail.
 */
class CloudFormationTemplateTest {
    /**
     * Resources the template creates ahead of the code, by suffix: the optional replay queue (replay
     * currently sends to the main queue, so the stack leaves it off by default).
     */
    static final Map<String, String> AHEAD_OF_THE_CODE = Map.of("-replay", "replay queue");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static Template template;
    private static ConfigKeys config;
    private static String prefix;
    private static RecordingAws bootstrap;

    @BeforeAll
    static void load() {
        template = Template.load();
        config = ConfigKeys.load();
        prefix = template.parameterDefault("Prefix").asText();
        bootstrap = new RecordingAws();
        Names names = new Names(prefix);
        new TableBootstrap(bootstrap.dynamo(), names).ensureTables();
        new QueueBootstrap(bootstrap.sqs(), names).ensureQueues(
                ConfigKeys.duration(config.defaultOf("poison-guard.resources.queue-retention")),
                ConfigKeys.duration(config.defaultOf("poison-guard.consumer.visibility-timeout")),
                Integer.parseInt(config.defaultOf("poison-guard.resources.redrive-max-receive-count")));
    }

    @Test
    void theBootstrapRecordingSawTheQueuesAndTables() {
        // Guards the rest: if the recording clients saw nothing, every comparison below would pass vacuously.
        assertTrue(bootstrap.queues.keySet().containsAll(List.of(prefix + "-jobs", prefix + "-jobs-dlq", prefix + "-notices")),
                "queues created: " + bootstrap.queues.keySet());
        assertTrue(bootstrap.tables.keySet().containsAll(List.of(prefix + "-ledger", prefix + "-quarantine", prefix + "-payloads",
                        prefix + "-audit", prefix + "-tenants")),
                "tables created: " + bootstrap.tables.keySet());
    }

    @Test
    void theTemplateCreatesEveryQueueAndTableTheCodeNamesAndNoOthers() {
        assertEquals(List.of(), nameProblems(template));
    }

    @Test
    void tablesHaveTheKeysIndexesBillingAndTtlTheCodeCreates() {
        assertEquals(List.of(), tableProblems(template));
    }

    @Test
    void queuesHaveTheRetentionVisibilityAndRedrivePoliciesTheCodeApplies() {
        assertEquals(List.of(), queueProblems(template));
    }

    @Test
    void everyQueueAndTableSurvivesStackDeletionAndTablesHavePointInTimeRecovery() {
        assertEquals(List.of(), durabilityProblems(template));
    }

    @Test
    void parametersDefaultToTheServiceDefaults() {
        assertEquals(config.defaultOf("poison-guard.prefix"), prefix);
        assertEquals(ConfigKeys.duration(config.defaultOf("poison-guard.resources.queue-retention")).toSeconds(),
                template.parameterDefault("QueueRetentionSeconds").asLong(), "QueueRetentionSeconds");
        assertEquals(ConfigKeys.duration(config.defaultOf("poison-guard.consumer.visibility-timeout")).toSeconds(),
                template.parameterDefault("VisibilityTimeoutSeconds").asLong(), "VisibilityTimeoutSeconds");
        assertEquals(Long.parseLong(config.defaultOf("poison-guard.resources.redrive-max-receive-count")),
                template.parameterDefault("RedriveMaxReceiveCount").asLong(), "RedriveMaxReceiveCount");
    }

    @Test
    void thePrefixParameterAcceptsExactlyThePrefixesTheServiceAccepts() {
        Pattern allowed = Pattern.compile(template.root.path("Parameters").path("Prefix").path("AllowedPattern").asText());
        for (String candidate : List.of("poison-guard", "a", "A_b-9", "x".repeat(60), "x".repeat(61), "", "a.b", "a b", "é", "a/b")) {
            boolean service = accepted(candidate);
            assertEquals(service, allowed.matcher(candidate).matches(),
                    "prefix '" + candidate + "': the service " + (service ? "accepts" : "rejects") + " it, the template does not agree");
        }
    }

    @Test
    void alarmsWatchDeadLetterDepthAndAgeAndTheOldestJob() {
        assertEquals(List.of(), alarmProblems(template));
    }

    @Test
    void everyReferenceResolvesAndNoResourceDependsOnItself() {
        assertEquals(List.of(), template.danglingReferences());
        assertEquals(List.of(), template.cycles());
    }

    // ------------------------------------------------------------------------------------------
    // The checks fail when the template is wrong
    // ------------------------------------------------------------------------------------------

    @Test
    void aDroppedIndexOrAnotherTtlAttributeIsReported() {
        Template broken = template.copy();
        ArrayNode indexes = (ArrayNode) broken.properties("QuarantineTable").path("GlobalSecondaryIndexes");
        indexes.remove(1);
        ((ObjectNode) broken.properties("LedgerTable").path("TimeToLiveSpecification")).put("AttributeName", "ttl");
        List<String> problems = new ArrayList<>(tableProblems(broken));
        problems.removeAll(tableProblems(template));
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains(prefix + "-ledger") && problems.get(0).contains("ttl"), problems.get(0));
        assertTrue(problems.get(1).contains(prefix + "-quarantine") && problems.get(1).contains("by-tenant"), problems.get(1));
    }

    @Test
    void aMissingQueueOrAStrayTableIsReported() {
        Template broken = template.copy();
        ((ObjectNode) broken.root.path("Resources")).remove("NoticesQueue");
        ((ObjectNode) broken.root.path("Resources")).set("ScratchTable", broken.resource("TenantsTable").deepCopy());
        ((ObjectNode) broken.properties("ScratchTable")).put("TableName", prefix + "-scratch");
        List<String> problems = nameProblems(broken);
        assertTrue(problems.stream().anyMatch(p -> p.contains(prefix + "-notices")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains(prefix + "-scratch")), problems.toString());
    }

    @Test
    void aRedrivePolicyThatDisagreesWithTheCodeIsReported() {
        Template broken = template.copy();
        ((ObjectNode) broken.root.path("Parameters").path("RedriveMaxReceiveCount")).put("Default", 5);
        ((ObjectNode) broken.properties("DeadLetterQueue")).remove("RedriveAllowPolicy");
        List<String> problems = queueProblems(broken);
        assertTrue(problems.stream().anyMatch(p -> p.contains("RedrivePolicy")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("RedriveAllowPolicy")), problems.toString());
    }

    @Test
    void aCircularReferenceIsReported() {
        Template broken = template.copy();
        ArrayNode sources = (ArrayNode) broken.properties("DeadLetterQueue").path("RedriveAllowPolicy").path("sourceQueueArns");
        sources.removeAll();
        sources.add(JsonNodeFactory.instance.objectNode().set("Fn::GetAtt",
                JsonNodeFactory.instance.arrayNode().add("JobsQueue").add("Arn")));
        assertEquals(List.of(List.of("DeadLetterQueue", "JobsQueue", "DeadLetterQueue")), broken.cycles());
    }

    // ------------------------------------------------------------------------------------------
    // Checks
    // ------------------------------------------------------------------------------------------

    static List<String> nameProblems(Template t) {
        List<String> problems = new ArrayList<>();
        Map<String, String> ids = t.idsByPhysicalName();
        Map<String, String> code = Infra.names(prefix);
        code.forEach((accessor, name) -> {
            if (!ids.containsKey(name)) {
                problems.add("the code uses " + name + " (Names." + accessor + ") and the template does not create it");
            }
        });
        for (String name : ids.keySet()) {
            boolean ahead = AHEAD_OF_THE_CODE.keySet().stream().anyMatch(suffix -> name.equals(prefix + suffix));
            if (!code.containsValue(name) && !ahead) {
                problems.add("the template creates " + name + ", which the code never names");
            }
        }
        return problems;
    }

    static List<String> tableProblems(Template t) {
        List<String> problems = new ArrayList<>();
        Map<String, String> ids = t.idsByPhysicalName();
        Map<String, TableShape> expected = new LinkedHashMap<>();
        bootstrap.tables.forEach((name, request) -> expected.put(name, TableShape.of(request, bootstrap.ttl.get(name))));
        expected.forEach((name, shape) -> {
            String id = ids.get(name);
            if (id == null) {
                return; // nameProblems reports it
            }
            TableShape actual = TableShape.of(t.resolve(t.properties(id)));
            if (!shape.equals(actual)) {
                problems.add(name + " (" + id + "): the code expects " + shape + " but the template has " + actual);
            }
        });
        return problems;
    }

    static List<String> queueProblems(Template t) {
        List<String> problems = new ArrayList<>();
        Map<String, String> ids = t.idsByPhysicalName();
        bootstrap.queues.forEach((name, attributes) -> {
            String id = ids.get(name);
            if (id == null) {
                return;
            }
            JsonNode properties = t.resolve(t.properties(id));
            attributes.forEach((attribute, value) -> {
                JsonNode actual = properties.path(attribute);
                if (actual.isMissingNode()) {
                    problems.add(name + ": the code sets " + attribute + "=" + value + ", the template does not set it");
                } else if (!normalized(parse(value)).equals(normalized(actual))) {
                    problems.add(name + ": the code sets " + attribute + "=" + value + ", the template " + actual);
                }
            });
        });
        return problems;
    }

    static List<String> durabilityProblems(Template t) {
        List<String> problems = new ArrayList<>();
        t.resources().forEach((id, r) -> {
            String type = r.path("Type").asText();
            if (!type.equals(Template.QUEUE) && !type.equals(Template.TABLE)) {
                return;
            }
            if (!"Retain".equals(r.path("DeletionPolicy").asText()) || !"Retain".equals(r.path("UpdateReplacePolicy").asText())) {
                problems.add(id + " holds jobs or records and must have DeletionPolicy and UpdateReplacePolicy Retain");
            }
            if (type.equals(Template.TABLE) && !t.resolve(r.path("Properties").path("PointInTimeRecoverySpecification"))
                    .path("PointInTimeRecoveryEnabled").asBoolean(false)) {
                problems.add(id + " has no point-in-time recovery");
            }
        });
        return problems;
    }

    static List<String> alarmProblems(Template t) {
        List<String> problems = new ArrayList<>();
        Names names = new Names(prefix);
        Map<String, String> watched = new LinkedHashMap<>();
        t.ofType(Template.ALARM).forEach((id, alarm) -> {
            JsonNode p = t.resolve(alarm.path("Properties"));
            if (!"AWS/SQS".equals(p.path("Namespace").asText()) || !"notBreaching".equals(p.path("TreatMissingData").asText())) {
                problems.add(id + ": SQS alarms need Namespace AWS/SQS and TreatMissingData notBreaching (idle queues publish nothing)");
            }
            if (p.path("AlarmActions").isEmpty()) {
                problems.add(id + " notifies no one (AlarmActions)");
            }
            for (JsonNode d : p.path("Dimensions")) {
                if ("QueueName".equals(d.path("Name").asText())) {
                    watched.put(p.path("MetricName").asText() + " of " + d.path("Value").asText(), id);
                }
            }
        });
        for (String required : List.of(
                "ApproximateNumberOfMessagesVisible of " + names.deadLetterQueue(),
                "ApproximateAgeOfOldestMessage of " + names.deadLetterQueue(),
                "ApproximateAgeOfOldestMessage of " + names.jobsQueue())) {
            if (!watched.containsKey(required)) {
                problems.add("no alarm on " + required + " (alarms: " + watched.keySet() + ")");
            }
        }
        return problems;
    }

    private static boolean accepted(String prefix) {
        try {
            Settings.requirePrefix(prefix);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static JsonNode parse(String value) {
        String v = value.trim();
        if (v.startsWith("{") || v.startsWith("[")) {
            try {
                return JSON.readTree(v);
            } catch (Exception e) {
                throw new IllegalStateException("not JSON: " + value, e);
            }
        }
        return JsonNodeFactory.instance.textNode(value);
    }

    /** Scalars as text, so that 100 and "100" compare equal, as they do for SQS. */
    private static JsonNode normalized(JsonNode n) {
        if (n.isObject()) {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            n.properties().forEach(e -> o.set(e.getKey(), normalized(e.getValue())));
            return o;
        }
        if (n.isArray()) {
            ArrayNode a = JsonNodeFactory.instance.arrayNode();
            n.forEach(e -> a.add(normalized(e)));
            return a;
        }
        return JsonNodeFactory.instance.textNode(n.asText());
    }

    @Test
    void normalizedComparisonStillSeesDifferentValues() {
        assertEquals(normalized(parse("{\"a\":\"1\"}")), normalized(JsonNodeFactory.instance.objectNode().put("a", 1)));
        assertFalse(normalized(parse("{\"a\":\"1\"}")).equals(normalized(JsonNodeFactory.instance.objectNode().put("a", 2))));
    }
}

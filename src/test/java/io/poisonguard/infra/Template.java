package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CloudFormation template, evaluated the way CloudFormation would with every parameter at its
 * default, in a made-up account (partition aws, us-east-1, 000000000000) so that ARNs can be compared
 * with what the code builds.
 */
final class Template {
    static final Path FILE = Infra.ROOT.resolve("infra/aws/poison-guard.yaml");
    static final String PARTITION = "aws";
    static final String REGION = "us-east-1";
    static final String ACCOUNT = "000000000000";
    static final String QUEUE = "AWS::SQS::Queue";
    static final String TABLE = "AWS::DynamoDB::Table";
    static final String POLICY = "AWS::IAM::ManagedPolicy";
    static final String ALARM = "AWS::CloudWatch::Alarm";
    static final String TOPIC = "AWS::SNS::Topic";
    static final String KEY = "AWS::KMS::Key";
    /** The suffix of an IAM resource that stands for every index of a table. */
    static final String ALL_INDEXES = "/index/*";

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Pattern SUB_VARIABLE = Pattern.compile("\\$\\{(!?)([^}]+)}");
    private static final Set<String> PSEUDO = Set.of("AWS::Partition", "AWS::Region", "AWS::AccountId", "AWS::StackName",
            "AWS::StackId", "AWS::URLSuffix", "AWS::NoValue", "AWS::NotificationARNs");

    final JsonNode root;

    Template(JsonNode root) {
        this.root = root;
    }

    static Template load() {
        return new Template(Yaml.read(FILE));
    }

    /** A deep copy to break on purpose in the checks' self-tests. */
    Template copy() {
        return new Template(root.deepCopy());
    }

    Map<String, JsonNode> resources() {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        root.path("Resources").properties().forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    Map<String, JsonNode> ofType(String type) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        resources().forEach((id, r) -> {
            if (type.equals(r.path("Type").asText())) {
                out.put(id, r);
            }
        });
        return out;
    }

    JsonNode resource(String id) {
        JsonNode r = root.path("Resources").path(id);
        if (r.isMissingNode()) {
            throw new IllegalArgumentException("no resource " + id + " in " + FILE);
        }
        return r;
    }

    String type(String id) {
        return resource(id).path("Type").asText();
    }

    ObjectNode properties(String id) {
        return (ObjectNode) resource(id).path("Properties");
    }

    JsonNode parameterDefault(String name) {
        JsonNode p = root.path("Parameters").path(name);
        if (p.isMissingNode() || !p.has("Default")) {
            throw new IllegalArgumentException("parameter " + name + " has no default");
        }
        return p.get("Default");
    }

    /** The physical name of a queue or table: QueueName or TableName, evaluated. */
    String physicalName(String id) {
        String property = switch (type(id)) {
            case QUEUE -> "QueueName";
            case TABLE -> "TableName";
            case POLICY -> "ManagedPolicyName";
            case TOPIC -> "TopicName";
            default -> throw new IllegalArgumentException(id + " has no name this check knows");
        };
        return resolve(properties(id).path(property)).asText();
    }

    /** Queues and tables by physical name. */
    Map<String, String> idsByPhysicalName() {
        Map<String, String> out = new LinkedHashMap<>();
        resources().forEach((id, r) -> {
            String type = r.path("Type").asText();
            if (type.equals(QUEUE) || type.equals(TABLE)) {
                out.put(physicalName(id), id);
            }
        });
        return out;
    }

    /** A KMS key's id as this check evaluates it (the real one is a UUID chosen by KMS). */
    static String keyId(String logicalId) {
        return "key-" + logicalId;
    }

    /**
     * The logical id of the KMS key a queue or topic is encrypted with ({@code KmsMasterKeyId: !Ref Key}), or
     * null when it uses no customer-managed key.
     */
    String encryptionKey(String id) {
        JsonNode k = properties(id).path("KmsMasterKeyId");
        return k.isObject() && k.has("Ref") && root.path("Resources").has(k.get("Ref").asText()) ? k.get("Ref").asText() : null;
    }

    static String queueArn(String name) {
        return "arn:" + PARTITION + ":sqs:" + REGION + ":" + ACCOUNT + ":" + name;
    }

    static String queueUrl(String name) {
        return "https://sqs." + REGION + ".amazonaws.com/" + ACCOUNT + "/" + name;
    }

    static String tableArn(String name) {
        return "arn:" + PARTITION + ":dynamodb:" + REGION + ":" + ACCOUNT + ":table/" + name;
    }

    // ------------------------------------------------------------------------------------------
    // Evaluation
    // ------------------------------------------------------------------------------------------

    /** Evaluates every intrinsic function in {@code node}; a value that is {@code AWS::NoValue} is left out. */
    JsonNode resolve(JsonNode node) {
        JsonNode v = evaluate(node);
        return v == null ? NODES.missingNode() : v;
    }

    private JsonNode evaluate(JsonNode node) {
        if (node.isObject() && node.size() == 1) {
            String fn = node.fieldNames().next();
            JsonNode arg = node.get(fn);
            switch (fn) {
                case "Ref":
                    return ref(arg.asText());
                case "Fn::GetAtt":
                    return NODES.textNode(attribute(arg.get(0).asText(), arg.get(1).asText()));
                case "Fn::Sub":
                    return NODES.textNode(sub(arg));
                case "Fn::If":
                    return evaluate(condition(arg.get(0).asText()) ? arg.get(1) : arg.get(2));
                case "Fn::Join": {
                    List<String> parts = new ArrayList<>();
                    evaluate(arg.get(1)).forEach(p -> parts.add(p.asText()));
                    return NODES.textNode(String.join(arg.get(0).asText(), parts));
                }
                default:
                    if (fn.startsWith("Fn::")) {
                        throw new IllegalStateException("the check does not evaluate " + fn + " yet");
                    }
            }
        }
        if (node.isObject()) {
            ObjectNode out = NODES.objectNode();
            node.properties().forEach(e -> {
                JsonNode v = evaluate(e.getValue());
                if (v != null) {
                    out.set(e.getKey(), v);
                }
            });
            return out;
        }
        if (node.isArray()) {
            ArrayNode out = NODES.arrayNode();
            node.forEach(e -> {
                JsonNode v = evaluate(e);
                if (v != null) {
                    out.add(v);
                }
            });
            return out;
        }
        return node;
    }

    private JsonNode ref(String name) {
        switch (name) {
            case "AWS::NoValue":
                return null;
            case "AWS::Partition":
                return NODES.textNode(PARTITION);
            case "AWS::Region":
                return NODES.textNode(REGION);
            case "AWS::AccountId":
                return NODES.textNode(ACCOUNT);
            default:
        }
        if (root.path("Parameters").has(name)) {
            return parameterDefault(name);
        }
        return switch (type(name)) {
            case QUEUE -> NODES.textNode(queueUrl(physicalName(name)));
            case TABLE -> NODES.textNode(physicalName(name));
            case POLICY -> NODES.textNode("arn:" + PARTITION + ":iam::" + ACCOUNT + ":policy/" + physicalName(name));
            case TOPIC -> NODES.textNode("arn:" + PARTITION + ":sns:" + REGION + ":" + ACCOUNT + ":" + physicalName(name));
            case KEY -> NODES.textNode(keyId(name));
            default -> throw new IllegalStateException("the check does not evaluate Ref " + name + " (" + type(name) + ")");
        };
    }

    private String attribute(String id, String attribute) {
        String type = type(id);
        if (type.equals(QUEUE)) {
            return switch (attribute) {
                case "Arn" -> queueArn(physicalName(id));
                case "QueueName" -> physicalName(id);
                case "QueueUrl" -> queueUrl(physicalName(id));
                default -> throw new IllegalStateException("unknown queue attribute " + attribute);
            };
        }
        if (type.equals(TABLE) && attribute.equals("Arn")) {
            return tableArn(physicalName(id));
        }
        if (type.equals(KEY) && attribute.equals("Arn")) {
            return "arn:" + PARTITION + ":kms:" + REGION + ":" + ACCOUNT + ":key/" + keyId(id);
        }
        throw new IllegalStateException("the check does not evaluate GetAtt " + id + "." + attribute);
    }

    private String sub(JsonNode arg) {
        String text = arg.isArray() ? arg.get(0).asText() : arg.asText();
        Matcher m = SUB_VARIABLE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(2);
            String value;
            if (!m.group(1).isEmpty()) {
                value = "${" + name + "}";
            } else if (arg.isArray() && arg.get(1).has(name)) {
                value = evaluate(arg.get(1).get(name)).asText();
            } else if (name.contains(".") && !name.startsWith("AWS::")) {
                int dot = name.indexOf('.');
                value = attribute(name.substring(0, dot), name.substring(dot + 1));
            } else {
                value = ref(name).asText();
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** A condition's value with every parameter at its default. */
    boolean condition(String name) {
        JsonNode c = root.path("Conditions").path(name);
        if (c.isMissingNode()) {
            throw new IllegalArgumentException("no condition " + name);
        }
        return truth(c);
    }

    private boolean truth(JsonNode c) {
        String fn = c.fieldNames().next();
        JsonNode arg = c.get(fn);
        return switch (fn) {
            case "Condition" -> condition(arg.asText());
            case "Fn::Equals" -> evaluate(arg.get(0)).asText().equals(evaluate(arg.get(1)).asText());
            case "Fn::Not" -> !truth(arg.get(0));
            case "Fn::And" -> {
                boolean all = true;
                for (JsonNode a : arg) {
                    all &= truth(a);
                }
                yield all;
            }
            case "Fn::Or" -> {
                boolean any = false;
                for (JsonNode a : arg) {
                    any |= truth(a);
                }
                yield any;
            }
            default -> throw new IllegalStateException("unknown condition function " + fn);
        };
    }

    // ------------------------------------------------------------------------------------------
    // IAM resources, symbolically
    // ------------------------------------------------------------------------------------------

    /**
     * The resources a policy statement names, as the logical ids they point at: {@code JobsQueue} for
     * {@code !GetAtt JobsQueue.Arn}, {@code AlertsTopic} for {@code !Ref AlertsTopic}, {@code QuarantineTable/index/*} for
     * {@code !Sub "${QuarantineTable.Arn}/index/*"}. Both branches of an {@code Fn::If} count (either may
     * be granted); anything else (a literal ARN, {@code *}) is returned as written, for the checks to reject.
     */
    Set<String> symbolicResources(JsonNode resource) {
        Set<String> out = new LinkedHashSet<>();
        symbolic(resource, out);
        return out;
    }

    private void symbolic(JsonNode n, Set<String> out) {
        if (n == null || n.isMissingNode() || n.isNull()) {
            return;
        }
        if (n.isArray()) {
            n.forEach(e -> symbolic(e, out));
            return;
        }
        if (n.isTextual()) {
            out.add(n.asText());
            return;
        }
        String fn = n.fieldNames().next();
        JsonNode arg = n.get(fn);
        switch (fn) {
            case "Fn::GetAtt" -> out.add(arg.get(1).asText().equals("Arn") ? arg.get(0).asText() : n.toString());
            case "Fn::If" -> {
                symbolic(arg.get(1), out);
                symbolic(arg.get(2), out);
            }
            case "Ref" -> {
                String target = arg.asText();
                if (root.path("Resources").has(target) && type(target).equals(TOPIC)) {
                    out.add(target); // Ref of a topic is its ARN
                } else if (!target.equals("AWS::NoValue")) {
                    out.add(n.toString());
                }
            }
            case "Fn::Sub" -> {
                Matcher m = Pattern.compile("^\\$\\{([A-Za-z0-9]+)\\.Arn}" + Pattern.quote(ALL_INDEXES) + "$").matcher(arg.asText());
                out.add(m.matches() ? m.group(1) + ALL_INDEXES : arg.asText());
            }
            default -> out.add(n.toString());
        }
    }

    // ------------------------------------------------------------------------------------------
    // References
    // ------------------------------------------------------------------------------------------

    /** Everything {@code node} refers to by name: parameters, resources, pseudo parameters, {@code X.Attr} pairs. */
    static Set<String> references(JsonNode node) {
        Set<String> out = new LinkedHashSet<>();
        collect(node, out);
        return out;
    }

    private static void collect(JsonNode n, Set<String> out) {
        if (n.isObject()) {
            if (n.size() == 1 && n.has("Ref")) {
                out.add(n.get("Ref").asText());
                return;
            }
            if (n.size() == 1 && n.has("Fn::GetAtt")) {
                out.add(n.get("Fn::GetAtt").get(0).asText() + "." + n.get("Fn::GetAtt").get(1).asText());
                return;
            }
            if (n.size() == 1 && n.has("Fn::Sub")) {
                JsonNode arg = n.get("Fn::Sub");
                Set<String> local = new HashSet<>();
                if (arg.isArray()) {
                    arg.get(1).fieldNames().forEachRemaining(local::add);
                    collect(arg.get(1), out);
                }
                Matcher m = SUB_VARIABLE.matcher(arg.isArray() ? arg.get(0).asText() : arg.asText());
                while (m.find()) {
                    if (m.group(1).isEmpty() && !local.contains(m.group(2))) {
                        out.add(m.group(2));
                    }
                }
                return;
            }
            n.forEach(v -> collect(v, out));
        } else if (n.isArray()) {
            n.forEach(v -> collect(v, out));
        }
    }

    /** Every reference that names nothing, every condition used and not defined: CloudFormation would reject the stack. */
    List<String> danglingReferences() {
        List<String> problems = new ArrayList<>();
        Set<String> parameters = new HashSet<>();
        root.path("Parameters").fieldNames().forEachRemaining(parameters::add);
        Set<String> resources = resources().keySet();
        Set<String> conditions = new HashSet<>();
        root.path("Conditions").fieldNames().forEachRemaining(conditions::add);
        for (String section : List.of("Resources", "Outputs", "Conditions")) {
            root.path(section).properties().forEach(e -> {
                for (String ref : references(e.getValue())) {
                    String target = ref.contains(".") && !ref.startsWith("AWS::") ? ref.substring(0, ref.indexOf('.')) : ref;
                    boolean known = PSEUDO.contains(target) || parameters.contains(target) || resources.contains(target);
                    if (!known) {
                        problems.add(section + "." + e.getKey() + " refers to " + ref + ", which is not defined");
                    }
                }
                conditionNames(e.getValue(), problems, conditions, section + "." + e.getKey());
            });
        }
        return problems;
    }

    private static void conditionNames(JsonNode n, List<String> problems, Set<String> conditions, String where) {
        if (n.isObject()) {
            JsonNode c = n.get("Condition");
            if (c != null && c.isTextual() && !conditions.contains(c.asText())) {
                problems.add(where + " uses condition " + c.asText() + ", which is not defined");
            }
            JsonNode iff = n.get("Fn::If");
            if (iff != null && !conditions.contains(iff.get(0).asText())) {
                problems.add(where + " uses condition " + iff.get(0).asText() + ", which is not defined");
            }
            n.forEach(v -> conditionNames(v, problems, conditions, where));
        } else if (n.isArray()) {
            n.forEach(v -> conditionNames(v, problems, conditions, where));
        }
    }

    /** Resource dependency cycles (Ref, GetAtt, Sub, DependsOn), each as the path around it. */
    List<List<String>> cycles() {
        Map<String, Set<String>> edges = new LinkedHashMap<>();
        Set<String> ids = resources().keySet();
        resources().forEach((id, r) -> {
            Set<String> to = new LinkedHashSet<>();
            for (String ref : references(r)) {
                String target = ref.contains(".") ? ref.substring(0, ref.indexOf('.')) : ref;
                if (ids.contains(target)) {
                    to.add(target);
                }
            }
            JsonNode dependsOn = r.path("DependsOn");
            if (dependsOn.isTextual()) {
                to.add(dependsOn.asText());
            }
            dependsOn.forEach(d -> to.add(d.asText()));
            edges.put(id, to);
        });
        List<List<String>> cycles = new ArrayList<>();
        Set<String> done = new HashSet<>();
        for (String id : ids) {
            walk(id, edges, new ArrayList<>(), done, cycles);
        }
        return cycles;
    }

    private static void walk(String id, Map<String, Set<String>> edges, List<String> path, Set<String> done, List<List<String>> cycles) {
        int at = path.indexOf(id);
        if (at >= 0) {
            List<String> cycle = new ArrayList<>(path.subList(at, path.size()));
            cycle.add(id);
            cycles.add(cycle);
            return;
        }
        if (done.contains(id)) {
            return;
        }
        path.add(id);
        for (Iterator<String> it = edges.getOrDefault(id, Set.of()).iterator(); it.hasNext(); ) {
            walk(it.next(), edges, path, done, cycles);
        }
        path.removeLast();
        done.add(id);
    }
}

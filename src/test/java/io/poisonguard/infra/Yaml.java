package io.poisonguard.infra;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads the deployment files as Jackson trees. CloudFormation's short-form intrinsics
 * ({@code !Ref X}, {@code !GetAtt X.Arn}, {@code !Sub ...}) become their long form ({@code {"Ref": "X"}},
 * {@code {"Fn::GetAtt": ["X", "Arn"]}}, ...), which a plain YAML mapper would silently drop, and a
 * duplicate key is an error, as it is for CloudFormation and Kubernetes.
 */
final class Yaml {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> FUNCTIONS = Set.of("Base64", "Cidr", "FindInMap", "GetAtt", "GetAZs", "ImportValue",
            "Join", "Select", "Split", "Sub", "Transform", "And", "Equals", "If", "Not", "Or", "ToJsonString", "Length");

    private Yaml() {
    }

    static JsonNode read(Path file) {
        List<JsonNode> docs = readAll(file);
        if (docs.size() != 1) {
            throw new IllegalStateException(file + ": expected one YAML document, found " + docs.size());
        }
        return docs.getFirst();
    }

    /** Every non-empty document of a multi-document file, in order. */
    static List<JsonNode> readAll(Path file) {
        try {
            return parse(Files.readString(file), file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<JsonNode> parse(String yaml, String source) {
        List<JsonNode> docs = new ArrayList<>();
        try (YAMLParser p = new YAMLFactory().createParser(yaml)) {
            while (p.nextToken() != null) {
                JsonNode doc = value(p, source);
                if (!doc.isNull() && !doc.isMissingNode()) {
                    docs.add(doc);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(source + ": not valid YAML: " + e.getMessage(), e);
        }
        return docs;
    }

    private static JsonNode value(YAMLParser p, String source) throws IOException {
        String tag = p.getTypeId();
        JsonToken token = p.currentToken();
        JsonNode node = switch (token) {
            case START_OBJECT -> {
                ObjectNode o = NODES.objectNode();
                while (p.nextToken() != JsonToken.END_OBJECT) {
                    String name = p.currentName();
                    p.nextToken();
                    if (o.has(name)) {
                        throw new IllegalStateException(source + ": duplicate key '" + name + "' at line "
                                + p.currentLocation().getLineNr());
                    }
                    o.set(name, value(p, source));
                }
                yield o;
            }
            case START_ARRAY -> {
                ArrayNode a = NODES.arrayNode();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    a.add(value(p, source));
                }
                yield a;
            }
            case VALUE_STRING -> NODES.textNode(p.getText());
            case VALUE_NUMBER_INT -> NODES.numberNode(p.getLongValue());
            case VALUE_NUMBER_FLOAT -> NODES.numberNode(p.getDecimalValue());
            case VALUE_TRUE -> NODES.booleanNode(true);
            case VALUE_FALSE -> NODES.booleanNode(false);
            case VALUE_NULL -> NODES.nullNode();
            default -> throw new IllegalStateException(source + ": unexpected YAML token " + token);
        };
        return tag == null ? node : intrinsic(tag, node);
    }

    /** {@code !Ref X} is {@code {"Ref": X}}; {@code !Fn X} is {@code {"Fn::Fn": X}}; other tags are left as they are. */
    private static JsonNode intrinsic(String tag, JsonNode value) {
        if (tag.equals("Ref") || tag.equals("Condition")) {
            return NODES.objectNode().set(tag, value);
        }
        if (!FUNCTIONS.contains(tag)) {
            return value;
        }
        JsonNode argument = value;
        if (tag.equals("GetAtt") && value.isTextual()) {
            String s = value.asText();
            int dot = s.indexOf('.');
            argument = NODES.arrayNode().add(s.substring(0, dot)).add(s.substring(dot + 1));
        }
        return NODES.objectNode().set("Fn::" + tag, argument);
    }
}

package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/** IAM policies of the template as (action, resource) grants, and the grants the code needs. */
final class Policies {
    /** One action on one resource; the resource is a logical id, {@code <TableId>/index/*}, or whatever else was written. */
    record Grant(String action, String resource) implements Comparable<Grant> {
        @Override
        public int compareTo(Grant o) {
            return toString().compareTo(o.toString());
        }

        @Override
        public String toString() {
            return action + " on " + resource;
        }
    }

    /** The resource type each IAM service's actions work on. */
    static final Map<String, String> RESOURCE_TYPES = Map.of("sqs", Template.QUEUE, "dynamodb", Template.TABLE, "sns", Template.TOPIC);

    /** The needs of some classes, and what kept some of them from being worked out. */
    record Needs(Set<Grant> grants, List<String> problems) {
    }

    private Policies() {
    }

    /** Every (action, resource) pair a managed policy's statements of this effect grant or deny. */
    static Set<Grant> statements(Template t, String policyId, String effect) {
        Set<Grant> out = new TreeSet<>();
        for (JsonNode s : t.properties(policyId).path("PolicyDocument").path("Statement")) {
            if (!effect.equals(s.path("Effect").asText())) {
                continue;
            }
            if (s.has("NotAction") || s.has("NotResource")) {
                out.add(new Grant("NotAction/NotResource", s.toString()));
                continue;
            }
            Set<String> resources = t.symbolicResources(s.path("Resource"));
            for (String action : texts(s.path("Action"))) {
                resources.forEach(r -> out.add(new Grant(action, r)));
            }
        }
        return out;
    }

    static Set<Grant> allows(Template t, String policyId) {
        return statements(t, policyId, "Allow");
    }

    static Set<Grant> denies(Template t, String policyId) {
        return statements(t, policyId, "Deny");
    }

    /**
     * What the given classes need: each of their actions on each of their queues (sqs) or tables
     * (dynamodb); a query or scan of a secondary index needs {@code <table>/index/*} instead.
     */
    static Needs needs(SdkCalls calls, Predicate<String> classes, Template t) {
        Map<String, String> ids = t.idsByPhysicalName();
        Map<String, String> names = Infra.names(t.parameterDefault("Prefix").asText());
        Set<Grant> out = new TreeSet<>();
        List<String> problems = new ArrayList<>();
        calls.uses.forEach((owner, uses) -> {
            if (!classes.test(owner)) {
                return;
            }
            Set<String> resources = new LinkedHashSet<>();
            for (String accessor : calls.names.getOrDefault(owner, Set.of())) {
                String id = ids.get(names.get(accessor));
                if (id == null) {
                    problems.add(owner + " works on " + names.get(accessor) + " (Names." + accessor + "), which the template does not create");
                } else {
                    resources.add(id);
                }
            }
            for (SdkCalls.Use use : uses) {
                String service = use.action().substring(0, use.action().indexOf(':'));
                String type = RESOURCE_TYPES.get(service);
                List<String> targets = service.equals("sns")
                        // The topic comes from configuration (poison-guard.alerts.sns.topic-arn), not from Names:
                        // the one the stack creates for it.
                        ? List.copyOf(t.ofType(Template.TOPIC).keySet())
                        : resources.stream().filter(id -> t.type(id).equals(type)).toList();
                if (targets.isEmpty() || service.equals("sns") && targets.size() != 1) {
                    problems.add(owner + " calls " + use.action() + " but the test cannot tell on which " + type
                            + (service.equals("sns") ? " (the template should create exactly one topic)" : " (no Names accessor reaches it)"));
                    continue;
                }
                for (String id : targets) {
                    out.add(new Grant(use.action(), use.index() ? id + Template.ALL_INDEXES : id));
                    out.addAll(keyUses(t, use.action(), id));
                }
            }
        });
        return new Needs(out, problems);
    }

    /**
     * What KMS needs of a caller of an encrypted queue or topic: sending needs a data key (and Decrypt, to reuse
     * a cached one), receiving needs Decrypt. DynamoDB tables use their key through DynamoDB's own grants.
     */
    static List<Grant> keyUses(Template t, String action, String id) {
        String type = t.type(id);
        if (!type.equals(Template.QUEUE) && !type.equals(Template.TOPIC)) {
            return List.of();
        }
        String key = t.encryptionKey(id);
        if (key == null) {
            return List.of();
        }
        return switch (action) {
            case "sqs:SendMessage", "sns:Publish" -> List.of(new Grant("kms:GenerateDataKey", key), new Grant("kms:Decrypt", key));
            case "sqs:ReceiveMessage" -> List.of(new Grant("kms:Decrypt", key));
            default -> List.of();
        };
    }

    /** Grants needed and not given, then given and not needed; empty when the policy is exactly right. */
    static List<String> compare(Set<Grant> needed, Set<Grant> granted, String policy) {
        List<String> problems = new ArrayList<>();
        for (Grant g : needed) {
            if (!granted.contains(g)) {
                problems.add(policy + " lacks " + g + ", which the code calls");
            }
        }
        for (Grant g : granted) {
            if (!needed.contains(g)) {
                problems.add(policy + " grants " + g + ", which the code never calls (least privilege)");
            }
        }
        return problems;
    }

    static Set<String> actions(Set<Grant> grants) {
        Set<String> out = new TreeSet<>();
        grants.forEach(g -> out.add(g.action()));
        return out;
    }

    private static List<String> texts(JsonNode n) {
        List<String> out = new ArrayList<>();
        if (n.isTextual()) {
            out.add(n.asText());
        }
        n.forEach(e -> out.add(e.asText()));
        return out;
    }
}

package io.poisonguard.infra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.poisonguard.config.Names;
import io.poisonguard.dynamodb.DynamoPayloadVault;
import io.poisonguard.dynamodb.DynamoQuarantineStore;
import io.poisonguard.dynamodb.TableBootstrap;
import io.poisonguard.infra.Policies.Grant;
import io.poisonguard.infra.Policies.Needs;
import io.poisonguard.sqs.QueueBootstrap;
import io.poisonguard.sqs.SqsJobQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The IAM policies in infra/aws/poison-guard.yaml grant what the code calls, on the queues and tables it
 * calls them on, and nothing more. The calls come from the compiled classes ({@link SdkCalls}), so a new
 * SDK call in src/main/java fails this test until the policy grants it, and a grant the code stopped
 * using fails it until the grant goes.
 */
class IamPoliciesTest {
    /** Classes that run only with poison-guard.resources.create=true. */
    static final Set<String> BOOTSTRAP = Set.of(TableBootstrap.class.getName(), QueueBootstrap.class.getName());
    /** Actions used only to create resources: the bootstrap policy exists for these. */
    static final Set<String> CREATION_ONLY = Set.of("sqs:CreateQueue", "sqs:SetQueueAttributes", "dynamodb:CreateTable",
            "dynamodb:UpdateTimeToLive");
    static final Set<String> RECORD_WRITES = Set.of("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
            "dynamodb:BatchWriteItem");
    static final Set<String> QUEUE_DESTRUCTION = Set.of("sqs:PurgeQueue", "sqs:DeleteQueue", "sqs:DeleteMessage",
            "sqs:StartMessageMoveTask");

    private static Template template;
    private static SdkCalls calls;

    @BeforeAll
    static void scan() {
        template = Template.load();
        calls = SdkCalls.scan(Infra.production());
    }

    @Test
    void everySdkCallInTheCodeIsUnderstoodAsAnIamAction() {
        assertEquals(List.of(), calls.unmapped);
        // Guards the rest: a scanner that found nothing would make every policy check below pass.
        Map<String, Set<String>> actions = calls.actions();
        assertTrue(actions.getOrDefault(SqsJobQueue.class.getName(), Set.of())
                .containsAll(Set.of("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility")), actions.toString());
        assertTrue(actions.getOrDefault(DynamoPayloadVault.class.getName(), Set.of())
                .containsAll(Set.of("dynamodb:PutItem", "dynamodb:Query", "dynamodb:GetItem", "dynamodb:DeleteItem")), actions.toString());
        assertTrue(calls.uses.get(DynamoQuarantineStore.class.getName()).contains(new SdkCalls.Use("dynamodb:Query", true)),
                calls.uses.toString());
    }

    @Test
    void theServicePolicyGrantsExactlyWhatTheRunningServiceCallsOnTheResourcesItCallsThemOn() {
        assertEquals(List.of(), serviceProblems(template));
    }

    @Test
    void creatingResourcesNeedsOnlyTheBootstrapPolicyOnTopOfTheServicePolicy() {
        Set<String> runtime = runtimeActions();
        Set<String> creationOnly = new TreeSet<>(calls.actionsOf(BOOTSTRAP));
        creationOnly.removeAll(runtime);
        assertEquals(new TreeSet<>(CREATION_ONLY), creationOnly, "actions only resource creation uses");

        Needs needs = Policies.needs(calls, BOOTSTRAP::contains, template);
        assertEquals(List.of(), needs.problems());
        Set<Grant> bootstrap = Policies.allows(template, "BootstrapPolicy");
        Set<Grant> together = new TreeSet<>(bootstrap);
        together.addAll(Policies.allows(template, "ServicePolicy"));
        List<String> problems = new ArrayList<>();
        needs.grants().stream().filter(g -> !together.contains(g))
                .forEach(g -> problems.add("resource creation needs " + g));
        bootstrap.stream().filter(g -> !needs.grants().contains(g))
                .forEach(g -> problems.add("BootstrapPolicy grants " + g + ", which resource creation never calls"));
        assertEquals(List.of(), problems);
    }

    @Test
    void operatorsReadWhatTheServiceReadsAndCannotChangeRecordsOrDropMessages() {
        assertEquals(List.of(), operatorProblems(template));
    }

    @Test
    void kedaMayReadTheMainQueueDepthAndNothingElse() {
        assertEquals(Set.of(new Grant("sqs:GetQueueAttributes", id(new Names(prefix()).jobsQueue()))),
                Policies.allows(template, "ScalerPolicy"));
    }

    @Test
    void theServiceRoleCarriesOnlyTheServicePolicy() {
        JsonNode arns = template.properties("ServiceRole").path("ManagedPolicyArns");
        assertEquals(1, arns.size(), arns.toString());
        assertEquals("ServicePolicy", arns.get(0).path("Ref").asText());
    }

    // ------------------------------------------------------------------------------------------
    // The checks fail when the policy or the scanner is wrong
    // ------------------------------------------------------------------------------------------

    @Test
    void anActionRemovedFromTheServicePolicyIsReported() {
        Template broken = template.copy();
        ArrayNode actions = (ArrayNode) statement(broken, "ServicePolicy", "PayloadVault").path("Action");
        for (int i = 0; i < actions.size(); i++) {
            if (actions.get(i).asText().equals("dynamodb:DeleteItem")) {
                actions.remove(i);
            }
        }
        assertEquals(List.of("ServicePolicy lacks dynamodb:DeleteItem on PayloadsTable, which the code calls"), newProblems(broken));
    }

    @Test
    void theDeadLetterQueueQuarantineTableAndAlertsTopicUseTheStacksOwnKeyAndTheServiceMayUseIt() {
        assertEquals("DataKey", template.encryptionKey("DeadLetterQueue"));
        assertEquals("DataKey", template.encryptionKey("AlertsTopic"));
        assertEquals("DataKey", template.properties("QuarantineTable").path("SSESpecification").path("KMSMasterKeyId").path("Ref").asText());
        assertTrue(template.properties("DataKey").path("EnableKeyRotation").asBoolean(), "the key rotates");
        // Without the key statement, sending a dead-letter copy or an alert would be refused by KMS.
        Template broken = template.copy();
        ArrayNode statements = (ArrayNode) broken.properties("ServicePolicy").path("PolicyDocument").path("Statement");
        for (int i = 0; i < statements.size(); i++) {
            if (statements.get(i).path("Sid").asText().equals("UseDataKey")) {
                statements.remove(i);
            }
        }
        assertEquals(List.of("ServicePolicy lacks kms:Decrypt on DataKey, which the code calls",
                "ServicePolicy lacks kms:GenerateDataKey on DataKey, which the code calls"), newProblems(broken));
    }

    @Test
    void anActionTheCodeNeverCallsIsReported() {
        Template broken = template.copy();
        ((ArrayNode) statement(broken, "ServicePolicy", "ConsumeJobs").path("Action")).add("sqs:PurgeQueue");
        assertEquals(List.of("ServicePolicy grants sqs:PurgeQueue on JobsQueue, which the code never calls (least privilege)"),
                newProblems(broken));
    }

    @Test
    void aGrantOnEveryResourceInsteadOfTheRightQueueIsReported() {
        Template broken = template.copy();
        statement(broken, "ServicePolicy", "SendCompletionNotices").put("Resource", "*");
        assertEquals(List.of(
                "ServicePolicy lacks sqs:SendMessage on NoticesQueue, which the code calls",
                "ServicePolicy grants sqs:SendMessage on *, which the code never calls (least privilege)"), newProblems(broken));
    }

    @Test
    void anOperatorPolicyThatCouldPurgeOrWriteIsReported() {
        Template broken = template.copy();
        ((ObjectNode) statement(broken, "OperatorPolicy", "QueuesKeepTheirMessages")).put("Effect", "Allow");
        ((ArrayNode) statement(broken, "OperatorPolicy", "ReadRecords").path("Action")).add("dynamodb:PutItem");
        List<String> problems = operatorProblems(broken);
        assertTrue(problems.stream().anyMatch(p -> p.contains("sqs:PurgeQueue")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("may dynamodb:PutItem")), problems.toString());
    }

    @Test
    void theScannerSeesCallsInLambdasMethodReferencesBatchesWaitersAndPaginators() {
        SdkCalls fixture = SdkCalls.scan(new ClassFileImporter().importClasses(SdkCallsFixture.class));
        assertEquals(Map.of(SdkCallsFixture.class.getName(), Set.of(
                new SdkCalls.Use("sqs:PurgeQueue", false),
                new SdkCalls.Use("sqs:SendMessage", false),
                new SdkCalls.Use("sqs:ListQueues", false),
                new SdkCalls.Use("dynamodb:DescribeTable", false),
                new SdkCalls.Use("dynamodb:Query", true),
                new SdkCalls.Use("dynamodb:Query", false),
                new SdkCalls.Use("dynamodb:Scan", true))), fixture.uses);
        assertEquals(1, fixture.unmapped.size(), fixture.unmapped.toString());
        assertTrue(fixture.unmapped.getFirst().startsWith("DynamoDbClient.transactWriteItems"), fixture.unmapped.getFirst());
    }

    // ------------------------------------------------------------------------------------------
    // Checks
    // ------------------------------------------------------------------------------------------

    static List<String> serviceProblems(Template t) {
        Needs needs = Policies.needs(calls, c -> !BOOTSTRAP.contains(c), t);
        List<String> problems = new ArrayList<>(needs.problems());
        problems.addAll(Policies.compare(needs.grants(), Policies.allows(t, "ServicePolicy"), "ServicePolicy"));
        Set<String> creation = new TreeSet<>(Policies.actions(Policies.allows(t, "ServicePolicy")));
        creation.retainAll(CREATION_ONLY);
        creation.forEach(a -> problems.add("ServicePolicy grants " + a + ", which only resource creation needs"));
        return problems;
    }

    /** What breaking a copy added to the problems of the template as it is, so these tests hold while the code moves. */
    private static List<String> newProblems(Template broken) {
        List<String> problems = new ArrayList<>(serviceProblems(broken));
        problems.removeAll(serviceProblems(template));
        return problems;
    }

    static List<String> operatorProblems(Template t) {
        List<String> problems = new ArrayList<>();
        Names names = new Names(prefix());
        Set<Grant> allows = Policies.allows(t, "OperatorPolicy");
        Set<Grant> denies = Policies.denies(t, "OperatorPolicy");
        for (Grant g : allows) {
            if (g.action().contains("*") || g.resource().contains("*") && !g.resource().endsWith(Template.ALL_INDEXES)) {
                problems.add("OperatorPolicy allows a wildcard: " + g);
            }
            if (RECORD_WRITES.contains(g.action()) || QUEUE_DESTRUCTION.contains(g.action()) || g.action().equals("sqs:SendMessage")) {
                problems.add("operators may " + g + "; records are written and messages sent only by the service");
            }
        }
        // What the service reads to answer GET /jobs and /quarantine, operators may read too; payloads
        // are the exception: they are read only through the service's audited payload path.
        String payloads = id(names.payloadsTable());
        Policies.needs(calls, c -> !BOOTSTRAP.contains(c), t).grants().stream()
                .filter(g -> g.action().equals("dynamodb:GetItem") || g.action().equals("dynamodb:Query"))
                .filter(g -> !g.resource().equals(payloads))
                .filter(g -> !allows.contains(g))
                .forEach(g -> problems.add("operators cannot " + g + ", which the service reads"));
        for (String action : List.of("dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:BatchGetItem")) {
            if (allows.contains(new Grant(action, payloads)) || !denies.contains(new Grant(action, payloads))) {
                problems.add("OperatorPolicy does not deny " + action + " on " + payloads + " (payloads are read only through the audited path)");
            }
        }
        for (String table : List.of(names.ledgerTable(), names.quarantineTable(), prefix() + "-audit",
                names.payloadsTable())) {
            for (String action : RECORD_WRITES) {
                if (!denies.contains(new Grant(action, id(table)))) {
                    problems.add("OperatorPolicy does not deny " + action + " on " + id(table));
                }
            }
        }
        // Issue 12, item 7: a receive on the DLQ is an unaudited payload read, and the copies it hides make a
        // concurrent replay answer CONFLICT. Operators read payloads only through the audited API.
        Grant peek = new Grant("sqs:ReceiveMessage", id(names.deadLetterQueue()));
        if (allows.contains(peek) || !denies.contains(peek)) {
            problems.add("OperatorPolicy does not deny sqs:ReceiveMessage on " + id(names.deadLetterQueue()));
        }
        for (String queue : List.of(names.jobsQueue(), names.deadLetterQueue())) {
            for (String action : QUEUE_DESTRUCTION) {
                if (!denies.contains(new Grant(action, id(queue)))) {
                    problems.add("OperatorPolicy does not deny " + action + " on " + id(queue));
                }
            }
        }
        return problems;
    }

    private static Set<String> runtimeActions() {
        Set<String> runtime = new TreeSet<>();
        calls.actions().forEach((c, a) -> {
            if (!BOOTSTRAP.contains(c)) {
                runtime.addAll(a);
            }
        });
        return runtime;
    }

    private static String prefix() {
        return template.parameterDefault("Prefix").asText();
    }

    private static String id(String physicalName) {
        String id = template.idsByPhysicalName().get(physicalName);
        if (id == null) {
            throw new IllegalStateException("the template creates no " + physicalName);
        }
        return id;
    }

    private static ObjectNode statement(Template t, String policy, String sid) {
        for (JsonNode s : t.properties(policy).path("PolicyDocument").path("Statement")) {
            if (sid.equals(s.path("Sid").asText())) {
                return (ObjectNode) s;
            }
        }
        throw new IllegalArgumentException("no statement " + sid + " in " + policy);
    }
}

package io.poisonguard.infra;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaCodeUnitAccess;
import com.tngtech.archunit.core.domain.JavaMethod;
import io.poisonguard.config.Names;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * What the code calls on AWS, read from the compiled classes (ArchUnit): every call or method reference
 * to an SDK service client or waiter, whatever the variable is named and wherever it is (lambdas
 * included), as the IAM action that authorizes it; and, per class, which queues and tables it works on.
 * (SNS topics come from configuration; {@link Policies} resolves them.)
 *
 * <p>A class's queues and tables are the {@link Names} accessors it calls, directly or through a method
 * that calls one ({@code urls.jobs()} calls {@code names.jobsQueue()}), plus those called where it is
 * constructed ({@code new DynamoLedgerStore(dynamo, names.ledgerTable(), clock)}).
 */
final class SdkCalls {
    private static final String SDK_SERVICES = "software.amazon.awssdk.services.";
    /** Request builders whose indexName sends the request to a secondary index, with the action that reads it. */
    private static final Map<String, String> INDEX_BUILDERS = Map.of(
            "software.amazon.awssdk.services.dynamodb.model.QueryRequest$Builder", "dynamodb:Query",
            "software.amazon.awssdk.services.dynamodb.model.ScanRequest$Builder", "dynamodb:Scan");
    /** IAM's service prefix for each SDK service package. */
    private static final Map<String, String> IAM_SERVICE = Map.of("sqs", "sqs", "dynamodb", "dynamodb", "sns", "sns");
    /** SQS authorizes its batch calls by the single-message action. */
    private static final Map<String, String> SQS_BATCH = Map.of(
            "SendMessageBatch", "SendMessage",
            "DeleteMessageBatch", "DeleteMessage",
            "ChangeMessageVisibilityBatch", "ChangeMessageVisibility");
    /** Operations whose IAM authorization is not one action of the same name: they need a mapping written by hand. */
    private static final Set<String> NOT_ONE_ACTION = Set.of("TransactWriteItems", "TransactGetItems", "ExecuteStatement",
            "BatchExecuteStatement", "ExecuteTransaction");
    /** Client methods that send no request. */
    private static final Set<String> NOT_OPERATIONS = Set.of("serviceName", "close", "serviceClientConfiguration", "waiter",
            "builder", "create");
    /** Waiters poll with a read operation. */
    private static final Map<String, String> WAITERS = Map.of(
            "DynamoDbWaiter.waitUntilTableExists", "dynamodb:DescribeTable",
            "DynamoDbWaiter.waitUntilTableNotExists", "dynamodb:DescribeTable");

    /** An IAM action, and whether it reads a secondary index rather than the table itself. */
    record Use(String action, boolean index) implements Comparable<Use> {
        @Override
        public int compareTo(Use o) {
            return (action + index).compareTo(o.action + o.index);
        }
    }

    /** Top-level class name to the IAM actions its code calls, each on a table or on an index. */
    final Map<String, Set<Use>> uses = new TreeMap<>();
    /** Top-level class name to the {@link Names} accessors (jobsQueue, ledgerTable, ...) it works on. */
    final Map<String, Set<String>> names = new TreeMap<>();
    /** SDK calls this scanner cannot turn into an IAM action. */
    final List<String> unmapped = new ArrayList<>();

    static SdkCalls scan(JavaClasses classes) {
        SdkCalls calls = new SdkCalls();
        for (JavaClass c : classes) {
            String owner = topLevel(c).getName();
            for (JavaCodeUnit unit : c.getCodeUnits()) {
                List<JavaCodeUnitAccess<?>> accesses = Stream.concat(unit.getMethodCallsFromSelf().stream(),
                        unit.getMethodReferencesFromSelf().stream()).<JavaCodeUnitAccess<?>>map(a -> a).toList();
                // A query or scan is on an index when the same method names one on its request.
                Set<String> indexed = new HashSet<>();
                for (JavaCodeUnitAccess<?> a : accesses) {
                    String builder = INDEX_BUILDERS.get(a.getTargetOwner().getName());
                    if (builder != null && a.getTarget().getName().equals("indexName")) {
                        indexed.add(builder);
                    }
                }
                for (JavaCodeUnitAccess<?> a : accesses) {
                    JavaClass targetOwner = a.getTargetOwner();
                    if (isSdkClientOrWaiter(targetOwner)) {
                        calls.iamAction(targetOwner, a.getTarget().getName(), a).ifPresent(action -> calls.uses
                                .computeIfAbsent(owner, k -> new TreeSet<>()).add(new Use(action, indexed.contains(action))));
                    }
                }
            }
        }
        calls.attributeNames(classes);
        return calls;
    }

    /** Top-level class name to the IAM actions its code calls, on tables or indexes. */
    Map<String, Set<String>> actions() {
        Map<String, Set<String>> out = new TreeMap<>();
        uses.forEach((c, u) -> u.forEach(use -> out.computeIfAbsent(c, k -> new TreeSet<>()).add(use.action())));
        return out;
    }

    /** Every IAM action the given classes call. */
    Set<String> actionsOf(Set<String> classNames) {
        Set<String> out = new TreeSet<>();
        classNames.forEach(n -> uses.getOrDefault(n, Set.of()).forEach(u -> out.add(u.action())));
        return out;
    }

    private Optional<String> iamAction(JavaClass owner, String method, JavaCodeUnitAccess<?> access) {
        String where = access.getOrigin().getFullName();
        if (owner.getSimpleName().endsWith("Waiter")) {
            if (method.equals("close")) {
                return Optional.empty();
            }
            String action = WAITERS.get(owner.getSimpleName() + "." + method);
            if (action == null) {
                unmapped.add(owner.getSimpleName() + "." + method + " in " + where + ": add the operation this waiter polls");
            }
            return Optional.ofNullable(action);
        }
        if (NOT_OPERATIONS.contains(method)) {
            return Optional.empty();
        }
        String pkg = owner.getPackageName().substring(SDK_SERVICES.length());
        String service = IAM_SERVICE.get(pkg);
        String operation = Character.toUpperCase(method.charAt(0)) + method.substring(1).replaceFirst("Paginator$", "");
        if (service == null) {
            unmapped.add(owner.getSimpleName() + "." + method + " in " + where + ": no IAM service prefix known for " + pkg);
            return Optional.empty();
        }
        if (NOT_ONE_ACTION.contains(operation)) {
            unmapped.add(owner.getSimpleName() + "." + method + " in " + where + ": IAM authorizes " + operation
                    + " by other actions; map it by hand");
            return Optional.empty();
        }
        if (!operationExists(owner.getPackageName(), operation)) {
            unmapped.add(owner.getSimpleName() + "." + method + " in " + where + ": not an SDK operation (no "
                    + operation + "Request); it may send requests this scanner cannot see");
            return Optional.empty();
        }
        return Optional.of(service + ":" + (service.equals("sqs") ? SQS_BATCH.getOrDefault(operation, operation) : operation));
    }

    private static boolean operationExists(String clientPackage, String operation) {
        try {
            Class.forName(clientPackage + ".model." + operation + "Request", false, SdkCalls.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static boolean isSdkClientOrWaiter(JavaClass c) {
        return c.getPackageName().startsWith(SDK_SERVICES)
                && (c.getSimpleName().endsWith("Client") || c.getSimpleName().endsWith("Waiter"));
    }

    private void attributeNames(JavaClasses classes) {
        for (JavaClass c : classes) {
            String owner = topLevel(c).getName();
            for (JavaCodeUnit unit : c.getCodeUnits()) {
                Set<String> unitNames = namesCalledIn(unit);
                // Names used where a class is constructed are the names it is built for, including those a method
                // reference handed to it reaches (new SendBatcher(sqs, urls::notices, ...) -> names.noticesQueue()).
                Set<String> handed = new HashSet<>(unitNames);
                unit.getMethodReferencesFromSelf().forEach(ref -> {
                    if (ref.getTargetOwner().getPackageName().startsWith("io.poisonguard")) {
                        ref.getTarget().resolveMember().ifPresent(m -> handed.addAll(namesCalledIn(m)));
                    }
                });
                unit.getConstructorCallsFromSelf().forEach(call -> {
                    String constructed = topLevel(call.getTargetOwner()).getName();
                    if (!constructed.equals(owner)) {
                        names.computeIfAbsent(constructed, k -> new TreeSet<>()).addAll(handed);
                    }
                });
                Set<String> used = new LinkedHashSet<>(unitNames);
                // One level through another production method: urls.jobs() -> names.jobsQueue().
                unit.getMethodCallsFromSelf().forEach(call -> {
                    if (call.getTargetOwner().getPackageName().startsWith("io.poisonguard")
                            && !call.getTargetOwner().isEquivalentTo(Names.class)) {
                        call.getTarget().resolveMember().ifPresent(m -> used.addAll(namesCalledIn(m)));
                    }
                });
                if (!used.isEmpty()) {
                    names.computeIfAbsent(owner, k -> new TreeSet<>()).addAll(used);
                }
            }
        }
    }

    private static Set<String> namesCalledIn(JavaCodeUnit unit) {
        Set<String> out = new HashSet<>();
        unit.getMethodCallsFromSelf().forEach(call -> {
            if (call.getTargetOwner().isEquivalentTo(Names.class)) {
                call.getTarget().resolveMember().filter(SdkCalls::isNameAccessor).ifPresent(m -> out.add(m.getName()));
            }
        });
        return out;
    }

    private static boolean isNameAccessor(JavaMethod m) {
        return m.getRawParameterTypes().isEmpty() && m.getRawReturnType().isEquivalentTo(String.class)
                && !m.getName().equals("prefix") && !m.getName().equals("toString");
    }

    private static JavaClass topLevel(JavaClass c) {
        JavaClass t = c;
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }
}

package io.poisonguard.infra;

import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveResponse;
import software.amazon.awssdk.services.dynamodb.waiters.DynamoDbWaiter;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.CreateQueueRequest;
import software.amazon.awssdk.services.sqs.model.CreateQueueResponse;
import software.amazon.awssdk.services.sqs.model.GetQueueAttributesRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueAttributesResponse;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlResponse;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.SetQueueAttributesRequest;
import software.amazon.awssdk.services.sqs.model.SetQueueAttributesResponse;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An SQS and a DynamoDB client that keep, instead of sending, what {@code QueueBootstrap} and
 * {@code TableBootstrap} ask for: the queues with their attributes, the CreateTable requests and the
 * TTL attribute of each table. Running the real bootstrap code against them tells this test exactly
 * which queues and tables the service expects, with which keys, indexes and attributes. A call the
 * bootstrap has not made before fails, so a change there is noticed here.
 */
final class RecordingAws {
    /** Queue name to its attributes (SQS attribute names), as created and then set. */
    final Map<String, Map<String, String>> queues = new LinkedHashMap<>();
    final Map<String, CreateTableRequest> tables = new LinkedHashMap<>();
    /** Table name to its TTL attribute. */
    final Map<String, String> ttl = new LinkedHashMap<>();

    SqsClient sqs() {
        return proxy(SqsClient.class, (name, request) -> switch (name) {
            case "getQueueUrl" -> {
                String queue = ((GetQueueUrlRequest) request).queueName();
                if (!queues.containsKey(queue)) {
                    throw QueueDoesNotExistException.builder().message("no queue " + queue).build();
                }
                yield GetQueueUrlResponse.builder().queueUrl(Template.queueUrl(queue)).build();
            }
            case "createQueue" -> {
                CreateQueueRequest r = (CreateQueueRequest) request;
                queues.put(r.queueName(), new LinkedHashMap<>(r.attributesAsStrings()));
                yield CreateQueueResponse.builder().queueUrl(Template.queueUrl(r.queueName())).build();
            }
            case "getQueueAttributes" -> {
                String queue = queueName(((GetQueueAttributesRequest) request).queueUrl());
                yield GetQueueAttributesResponse.builder()
                        .attributes(Map.of(QueueAttributeName.QUEUE_ARN, Template.queueArn(queue))).build();
            }
            case "setQueueAttributes" -> {
                SetQueueAttributesRequest r = (SetQueueAttributesRequest) request;
                queues.get(queueName(r.queueUrl())).putAll(r.attributesAsStrings());
                yield SetQueueAttributesResponse.builder().build();
            }
            default -> throw new UnsupportedOperationException("the bootstrap called SqsClient." + name + " (new to this test)");
        });
    }

    DynamoDbClient dynamo() {
        return proxy(DynamoDbClient.class, (name, request) -> switch (name) {
            case "describeTable" -> describe(((DescribeTableRequest) request).tableName());
            case "createTable" -> {
                CreateTableRequest r = (CreateTableRequest) request;
                tables.put(r.tableName(), r);
                yield CreateTableResponse.builder().build();
            }
            case "updateTimeToLive" -> {
                UpdateTimeToLiveRequest r = (UpdateTimeToLiveRequest) request;
                if (Boolean.TRUE.equals(r.timeToLiveSpecification().enabled())) {
                    ttl.put(r.tableName(), r.timeToLiveSpecification().attributeName());
                }
                yield UpdateTimeToLiveResponse.builder().build();
            }
            case "waiter" -> proxy(DynamoDbWaiter.class, (waiterCall, waiterRequest) -> {
                if (!waiterCall.equals("waitUntilTableExists")) {
                    throw new UnsupportedOperationException("the bootstrap called DynamoDbWaiter." + waiterCall);
                }
                describe(((DescribeTableRequest) waiterRequest).tableName());
                return null;
            });
            default -> throw new UnsupportedOperationException("the bootstrap called DynamoDbClient." + name + " (new to this test)");
        });
    }

    private DescribeTableResponse describe(String table) {
        if (!tables.containsKey(table)) {
            throw ResourceNotFoundException.builder().message("no table " + table).build();
        }
        return DescribeTableResponse.builder()
                .table(TableDescription.builder().tableName(table).tableStatus(TableStatus.ACTIVE).build()).build();
    }

    private static String queueName(String url) {
        return url.substring(url.lastIndexOf('/') + 1);
    }

    private interface Call {
        Object answer(String method, Object request);
    }

    /**
     * The SDK's {@code x(Consumer<Builder>)} overloads (and a waiter's {@code x(Consumer<Builder>, Consumer<Override>)})
     * are default methods that build the request and call {@code x(Request)}; they run as written, so every request
     * reaches {@code call} built, as its first argument.
     */
    private static <T> T proxy(Class<T> type, Call call) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> "recording " + type.getSimpleName();
                };
            }
            if (method.isDefault() && args != null && args.length >= 1 && java.util.Arrays.stream(args).allMatch(a -> a instanceof Consumer<?>)) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            switch (method.getName()) {
                case "close":
                    return null;
                case "serviceName":
                    return type.getSimpleName();
                default:
                    return call.answer(method.getName(), args == null || args.length == 0 ? null : args[0]);
            }
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type}, handler));
    }
}

package io.poisonguard.observability;

import io.micrometer.core.instrument.Metrics;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the requests the SQS and DynamoDB clients put on the wire, by service and operation, each HTTP
 * attempt once (an SDK retry is a second request): {@code poison_guard_aws_requests_total}. Registered
 * by class name ({@code quarkus.sqs.interceptors}, {@code quarkus.dynamodb.interceptors}), so the SDK
 * creates it; the counts are therefore process-wide.
 */
public final class AwsRequestCounter implements ExecutionInterceptor {
    private static final Map<String, LongAdder> COUNTS = new ConcurrentHashMap<>();
    /** The meter per {@code service.operation}, looked up once (a lookup by name and tags on every request costs more than the count). */
    private static final Map<String, io.micrometer.core.instrument.Counter> METERS = new ConcurrentHashMap<>();

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        String service = String.valueOf(attributes.getAttribute(SdkExecutionAttribute.SERVICE_NAME));
        String operation = String.valueOf(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
        String key = service + "." + operation;
        COUNTS.computeIfAbsent(key, k -> new LongAdder()).increment();
        // The global registry's meter follows registries added to it later (a restarted application's).
        METERS.computeIfAbsent(key, k -> Metrics.counter("poison.guard.aws.requests", "service", service, "operation", operation)).increment();
    }

    /** Requests so far, by {@code service.operation} (for example {@code DynamoDb.UpdateItem}). */
    public static Map<String, Long> snapshot() {
        Map<String, Long> out = new TreeMap<>();
        COUNTS.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}

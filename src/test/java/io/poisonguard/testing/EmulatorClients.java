package io.poisonguard.testing;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.net.URI;

/** Plain SDK clients on the emulators, for tests that drive service processes from outside. */
public final class EmulatorClients {
    private static final StaticCredentialsProvider CREDENTIALS = StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local"));

    private EmulatorClients() {
    }

    public static SqsClient sqs(Emulators e) {
        return sqs(e.sqsEndpoint());
    }

    /** An SQS client of its own for {@code endpoint} (a test's, apart from the application's). */
    public static SqsClient sqs(String endpoint) {
        return SqsClient.builder().endpointOverride(URI.create(endpoint)).region(Region.of(Emulators.REGION))
                .credentialsProvider(CREDENTIALS).httpClientBuilder(ApacheHttpClient.builder()).build();
    }

    public static DynamoDbClient dynamo(Emulators e) {
        return DynamoDbClient.builder().endpointOverride(URI.create(e.dynamoEndpoint())).region(Region.of(Emulators.REGION))
                .credentialsProvider(CREDENTIALS).httpClientBuilder(ApacheHttpClient.builder()).build();
    }

    /** An SQS client whose requests also pass through {@code interceptor} (a test counting or holding them). */
    public static SqsClient sqs(Emulators e, software.amazon.awssdk.core.interceptor.ExecutionInterceptor interceptor) {
        return SqsClient.builder().endpointOverride(URI.create(e.sqsEndpoint())).region(Region.of(Emulators.REGION))
                .credentialsProvider(CREDENTIALS).httpClientBuilder(ApacheHttpClient.builder())
                .overrideConfiguration(o -> o.addExecutionInterceptor(interceptor)).build();
    }

    /** A DynamoDB client whose requests also pass through {@code interceptor} (a test counting or recording them). */
    public static DynamoDbClient dynamo(Emulators e, software.amazon.awssdk.core.interceptor.ExecutionInterceptor interceptor) {
        return DynamoDbClient.builder().endpointOverride(URI.create(e.dynamoEndpoint())).region(Region.of(Emulators.REGION))
                .credentialsProvider(CREDENTIALS).httpClientBuilder(ApacheHttpClient.builder())
                .overrideConfiguration(o -> o.addExecutionInterceptor(interceptor)).build();
    }

    /** A DynamoDB client whose calls give up after {@code apiCallTimeout} (retries included), e.g. while dynalite is frozen. */
    public static DynamoDbClient dynamo(Emulators e, java.time.Duration apiCallTimeout) {
        return dynamo(e, c -> c.apiCallTimeout(apiCallTimeout));
    }

    /** A DynamoDB client on a port nothing listens on, trying each call once: every call fails as in an outage. */
    public static DynamoDbClient dynamoDown() {
        return dynamoDown(new software.amazon.awssdk.core.interceptor.ExecutionInterceptor() {
        });
    }

    /**
     * A DynamoDB client on a port nothing listens on, trying each call once: every call fails as in an outage, or as
     * {@code interceptor} makes it fail before that (with an answer DynamoDB gives when it is not there, say).
     */
    public static DynamoDbClient dynamoDown(software.amazon.awssdk.core.interceptor.ExecutionInterceptor interceptor) {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return DynamoDbClient.builder().endpointOverride(URI.create("http://127.0.0.1:" + port)).region(Region.of(Emulators.REGION))
                .credentialsProvider(CREDENTIALS).httpClientBuilder(ApacheHttpClient.builder())
                .overrideConfiguration(o -> o.retryStrategy(r -> r.maxAttempts(1)).apiCallTimeout(java.time.Duration.ofSeconds(5))
                        .addExecutionInterceptor(interceptor))
                .build();
    }

    /** A DynamoDB client with {@code override} applied to its configuration (timeouts, say). */
    public static DynamoDbClient dynamo(Emulators e, java.util.function.Consumer<software.amazon.awssdk.core.client.config.ClientOverrideConfiguration.Builder> override) {
        return DynamoDbClient.builder().endpointOverride(URI.create(e.dynamoEndpoint())).region(Region.of(Emulators.REGION))
                .credentialsProvider(CREDENTIALS).httpClientBuilder(ApacheHttpClient.builder())
                .overrideConfiguration(override).build();
    }
}

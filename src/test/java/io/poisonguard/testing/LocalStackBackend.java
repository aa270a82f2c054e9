package io.poisonguard.testing;

import org.testcontainers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;

import java.util.Map;

/**
 * The opt-in backend of the {@code localstack} Maven profile: one LocalStack container per JVM
 * serving both SQS and DynamoDB. Needs Docker and {@code LOCALSTACK_AUTH_TOKEN}; for a token-free
 * emulator set {@code LOCALSTACK_IMAGE} to a compatible image such as Floci's.
 */
final class LocalStackBackend {
    private static LocalStackContainer container;

    private LocalStackBackend() {
    }

    static synchronized Map<String, String> clientConfig() {
        if (container == null) {
            String image = System.getenv().getOrDefault("LOCALSTACK_IMAGE", "localstack/localstack:4");
            container = new LocalStackContainer(DockerImageName.parse(image).asCompatibleSubstituteFor("localstack/localstack"))
                    .withServices("sqs", "dynamodb");
            String token = System.getenv("LOCALSTACK_AUTH_TOKEN");
            if (token != null && !token.isBlank()) {
                container.withEnv("LOCALSTACK_AUTH_TOKEN", token);
            }
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "localstack-stop"));
        }
        String endpoint = container.getEndpoint().toString();
        return Map.of(
                "quarkus.sqs.endpoint-override", endpoint,
                "quarkus.dynamodb.endpoint-override", endpoint,
                "quarkus.sqs.aws.region", container.getRegion(),
                "quarkus.dynamodb.aws.region", container.getRegion(),
                "quarkus.sqs.aws.credentials.type", "static",
                "quarkus.sqs.aws.credentials.static-provider.access-key-id", container.getAccessKey(),
                "quarkus.sqs.aws.credentials.static-provider.secret-access-key", container.getSecretKey(),
                "quarkus.dynamodb.aws.credentials.type", "static",
                "quarkus.dynamodb.aws.credentials.static-provider.access-key-id", container.getAccessKey(),
                "quarkus.dynamodb.aws.credentials.static-provider.secret-access-key", container.getSecretKey());
    }
}

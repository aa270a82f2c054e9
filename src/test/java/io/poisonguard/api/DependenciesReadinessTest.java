package io.poisonguard.api;

import io.poisonguard.config.Names;
import io.poisonguard.sqs.QueueUrls;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.net.ServerSocket;
import java.net.URI;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DependenciesReadinessTest {

    @Test
    void readinessIsDownAndSaysWhichDependencyFailedWhenNothingAnswers() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        URI nowhere = URI.create("http://127.0.0.1:" + port);
        var creds = StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "x"));
        try (SqsClient sqs = SqsClient.builder().endpointOverride(nowhere).region(Region.US_EAST_1).credentialsProvider(creds)
                .httpClientBuilder(ApacheHttpClient.builder()).build();
             DynamoDbClient dynamo = DynamoDbClient.builder().endpointOverride(nowhere).region(Region.US_EAST_1).credentialsProvider(creds)
                     .httpClientBuilder(ApacheHttpClient.builder()).build()) {
            Names names = new Names("nowhere");
            HealthCheckResponse r = new DependenciesReadiness(sqs, dynamo, new QueueUrls(sqs, names), names).call();
            assertEquals(HealthCheckResponse.Status.DOWN, r.getStatus());
            assertTrue(r.getData().orElseThrow().get("sqs").toString().startsWith("down"), r.getData().toString());
            assertTrue(r.getData().orElseThrow().get("dynamodb").toString().startsWith("down"), r.getData().toString());
        }
    }
}

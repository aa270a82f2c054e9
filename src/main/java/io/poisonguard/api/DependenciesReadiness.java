package io.poisonguard.api;

import io.poisonguard.config.Names;
import io.poisonguard.sqs.QueueUrls;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** Ready only when both the main queue and the ledger table answer. */
@Readiness
@ApplicationScoped
public class DependenciesReadiness implements HealthCheck {
    private final SqsClient sqs;
    private final DynamoDbClient dynamo;
    private final QueueUrls urls;
    private final Names names;

    public DependenciesReadiness(SqsClient sqs, DynamoDbClient dynamo, QueueUrls urls, Names names) {
        this.sqs = sqs;
        this.dynamo = dynamo;
        this.urls = urls;
        this.names = names;
    }

    @Override
    public HealthCheckResponse call() {
        var r = HealthCheckResponse.named("poison-guard-dependencies");
        boolean up = true;
        try {
            String depth = sqs.getQueueAttributes(b -> b.queueUrl(urls.jobs())
                    .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes()
                    .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES);
            r.withData("sqs", "up").withData("queueDepth", depth == null ? "unknown" : depth);
        } catch (RuntimeException e) {
            up = false;
            r.withData("sqs", "down: " + e.getClass().getSimpleName());
        }
        try {
            dynamo.describeTable(b -> b.tableName(names.ledgerTable()));
            r.withData("dynamodb", "up");
        } catch (RuntimeException e) {
            up = false;
            r.withData("dynamodb", "down: " + e.getClass().getSimpleName());
        }
        return r.status(up).build();
    }
}

package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.testing.Queues;
import jakarta.inject.Inject;
import software.amazon.awssdk.services.sqs.SqsClient;

/** What every flow test reads and sends through: the queues, the ledger and the quarantine store. */
abstract class FlowTest {
    @Inject
    SqsClient sqs;
    @Inject
    Names names;
    @Inject
    LedgerStore ledger;
    @Inject
    QuarantineStore quarantine;

    /**
     * A request to the management interface, where health, metrics and OpenAPI are served (its own port,
     * {@code quarkus.management.test-port} under test); the API port does not serve them.
     */
    static io.restassured.specification.RequestSpecification management() {
        return io.restassured.RestAssured.given().port(org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getOptionalValue("quarkus.management.test-port", Integer.class).orElse(9001));
    }

    Queues queues() {
        return new Queues(sqs, names);
    }

    @Inject
    software.amazon.awssdk.services.dynamodb.DynamoDbClient dynamo;

    /**
     * The key of a job a test sent. Every test gives each job id to one tenant, so the ledger item whose key
     * ends in the job id is that job's; before the job has an item, a key that finds nothing.
     */
    JobKey key(String jobId) {
        java.util.Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> start = null;
        do {
            var from = start;
            var page = dynamo.scan(b -> b.tableName(names.ledgerTable()).exclusiveStartKey(from));
            for (var item : page.items()) {
                // Through the store's decoding: a compact item keeps its tenant inside one attribute.
                JobKey stored = JobKey.of(io.poisonguard.dynamodb.DynamoLedgerStore.decode(item));
                if (stored.jobId().equals(jobId)) {
                    return stored;
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return new JobKey(null, jobId);
    }

    /** Puts {@code tenant} in the tenant directory (as an admin would), allowed to run {@code jobTypes}. */
    void registerTenant(String tenant, String status, String... jobTypes) {
        io.restassured.RestAssured.given().auth().oauth2(io.poisonguard.testing.Tokens.of("ada", "admin"))
                .contentType(io.restassured.http.ContentType.JSON)
                .body(java.util.Map.of("status", status, "jobTypes", java.util.List.of(jobTypes), "reason", "test setup"))
                .put("/ops/tenants/" + tenant).then().statusCode(200);
    }

    /** The job's ledger state, or null when it has no record yet. */
    JobState state(String jobId) {
        return ledger.find(key(jobId)).map(LedgerRecord::state).orElse(null);
    }
}

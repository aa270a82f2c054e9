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
            var page = dynamo.scan(b -> b.tableName(names.ledgerTable()).projectionExpression("jobId, tenant").exclusiveStartKey(from));
            for (var item : page.items()) {
                String stored = item.get("jobId").s();
                if (stored.endsWith(JobKey.SEPARATOR + jobId)) {
                    return stored.charAt(0) == JobKey.SEPARATOR ? new JobKey(null, jobId)
                            : new JobKey(stored.substring(0, stored.length() - jobId.length() - 1), jobId);
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return new JobKey(null, jobId);
    }

    /** The job's ledger state, or null when it has no record yet. */
    JobState state(String jobId) {
        return ledger.find(key(jobId)).map(LedgerRecord::state).orElse(null);
    }
}

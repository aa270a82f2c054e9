package io.poisonguard.infra;

import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.ListQueuesRequest;
import software.amazon.awssdk.services.sqs.model.ListQueuesResponse;

import java.util.function.Function;

/**
 * Never run: compiled only so that {@link IamPoliciesTest} can scan it and prove the scanner sees SDK
 * calls however they are written.
 */
final class SdkCallsFixture {
    private final SqsClient anyName;
    private final DynamoDbClient store;

    SdkCallsFixture(SqsClient anyName, DynamoDbClient store) {
        this.anyName = anyName;
        this.store = store;
    }

    void calls() {
        anyName.purgeQueue(b -> b.queueUrl("u"));
        Runnable later = () -> anyName.sendMessageBatch(b -> b.queueUrl("u"));
        later.run();
        Function<ListQueuesRequest, ListQueuesResponse> reference = anyName::listQueues;
        reference.apply(ListQueuesRequest.builder().build());
        store.waiter().waitUntilTableNotExists(b -> b.tableName("t"));
        store.queryPaginator(QueryRequest.builder().tableName("t").indexName("i").build());
        store.transactWriteItems(b -> b.transactItems(java.util.List.of()));
    }

    void tableQuery() {
        store.query(b -> b.tableName("t").keyConditionExpression("k = :k"));
    }

    void indexScan() {
        store.scan(b -> b.tableName("t").indexName("i"));
    }
}

package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.observability.AwsRequestCounter;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11: a healthy message costs two DynamoDB writes, counted on the wire: the conditional create
 * (a PutItem) that starts its attempt (a first delivery reads nothing first) and the write that ends it,
 * which also records its completion notice: a put of the whole item (well within one write unit) in a
 * BatchWriteItem shared with other jobs' endings. Before: two reads and four writes (two for the effect ledger).
 */
@QuarkusTest
@TestProfile(HotPathCostTest.Profile.class)
class HotPathCostTest extends FlowTest {
    static final int JOBS = 40;

    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // Nothing else reads the tables while the jobs run: the gauges refresh far apart.
            return Map.of("poison-guard.monitoring.refresh", "1h");
        }
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    @Test
    void aHealthyFirstDeliveryCostsTwoDynamoDbWritesAndNoRead() {
        Queues queues = queues();
        // Warm up: the first job pays for connections and lazy beans.
        queues.send(Queues.permitV3("P-WARM"), Queues.permitAttributes("warm-0", "tenant-h", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("warm-0") == JobState.SUCCEEDED && queues.depth(names.jobsQueue()) == 0);
        queues.drain(names.noticesQueue());

        Map<String, Long> before = AwsRequestCounter.snapshot();
        List<String> ids = IntStream.range(0, JOBS).mapToObj(i -> "hot-" + i).toList();
        for (String id : ids) {
            queues.send(Queues.permitV3("P-" + id), Queues.permitAttributes(id, "tenant-h", 3));
        }
        // Waits on the queues only: this test's own ledger reads would be counted with the service's.
        await().atMost(Duration.ofSeconds(60)).until(() -> queues.depth(names.noticesQueue()) == JOBS && queues.depth(names.jobsQueue()) == 0);
        Map<String, Long> after = AwsRequestCounter.snapshot();
        System.out.println("[hot path] DynamoDB requests for " + JOBS + " healthy jobs: GetItem=" + delta(before, after, "DynamoDb.GetItem")
                + " UpdateItem=" + delta(before, after, "DynamoDb.UpdateItem") + " PutItem=" + delta(before, after, "DynamoDb.PutItem")
                + " all=" + after.entrySet().stream().filter(e -> e.getKey().startsWith("DynamoDb."))
                .mapToLong(e -> e.getValue() - before.getOrDefault(e.getKey(), 0L)).sum());

        assertEquals(0, delta(before, after, "DynamoDb.GetItem"), "a first delivery reads nothing before its conditional create");
        assertEquals(JOBS, delta(before, after, "DynamoDb.PutItem"), "one conditional put creates each job's item and starts its attempt");
        // The ending (which records the notice: no table of its own for effects) goes in a BatchWriteItem shared with the
        // jobs that end with it, while the attempt's lease has a long way to run: none fell back to a put of its own.
        long endings = delta(before, after, "DynamoDb.BatchWriteItem");
        System.out.println("[hot path] BatchWriteItem requests for " + JOBS + " endings: " + endings);
        assertTrue(endings >= 1 && endings <= JOBS, endings + " BatchWriteItem requests for " + JOBS + " endings");
        assertEquals(0, delta(before, after, "DynamoDb.UpdateItem"), "a healthy job's item is small enough to be put whole");
        for (String id : ids) {
            LedgerRecord r = ledger.find(key(id)).orElseThrow();
            assertEquals(JobState.SUCCEEDED, r.state());
            assertEquals(1, r.attempt());
            assertEquals(Map.of("completion-notice", 1), r.effects(), id + " records its notice with the attempt that sent it");
        }
        assertEquals(JOBS, queues.drain(names.noticesQueue()).size(), "one notice per job");
        // Notices go out through SendMessageBatch (jobs finishing together share one request), never one SendMessage each.
        System.out.println("[hot path] SQS requests: SendMessage=" + delta(before, after, "Sqs.SendMessage")
                + " SendMessageBatch=" + delta(before, after, "Sqs.SendMessageBatch"));
        // This test's SQS client is counted too: its own 40 SendMessage requests (the jobs) are all there are.
        assertEquals(JOBS, delta(before, after, "Sqs.SendMessage"), "no notice is sent on a SendMessage of its own");
        long batches = delta(before, after, "Sqs.SendMessageBatch");
        assertTrue(batches >= 1 && batches <= JOBS, batches + " SendMessageBatch requests for " + JOBS + " notices");
    }

    /** A healthy, finished job's item in the format this test's service writes: compact, the default. */
    protected void assertFinishedItemFormat(Map<String, AttributeValue> item) {
        assertEquals(Set.of("jobId", "version", "expiresAt", "history", "record"), item.keySet());
    }

    @Test
    void theServiceWritesItsConfiguredItemFormat() {
        Queues queues = queues();
        queues.send(Queues.permitV3("P-FORMAT"), Queues.permitAttributes("format-0", "tenant-h", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("format-0") == JobState.SUCCEEDED);
        Map<String, AttributeValue> item = dynamo.getItem(b -> b.tableName(names.ledgerTable()).consistentRead(true)
                .key(Map.of("jobId", AttributeValue.fromS(key("format-0").storage())))).item();
        assertFinishedItemFormat(item);
        assertEquals("2", item.get("version").n(), "created, then ended: two writes");
    }
}

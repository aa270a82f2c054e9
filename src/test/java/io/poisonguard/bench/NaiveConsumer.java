package io.poisonguard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.example.permit.ExampleConfig;
import io.poisonguard.example.permit.PermitReportWork;
import io.poisonguard.example.permit.SimulatedRecordsProvider;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The baselines poison-guard is measured against, doing the same work per message with the same SDK: the
 * example workload's own code ({@link PermitReportWork}: read the permit in its schema version, ask the
 * simulated permit-records for its standing, render the report, digest it, compose the notice), then send
 * the notice with the attributes poison-guard's carries (job id, tenant, job type). {@code naive} receives,
 * handles, sends the notice and batch-deletes; {@code idempotent} adds what an idempotency library costs, a
 * conditional put before the work and an update after it, on a table of its own. {@code threads} loops, each
 * receiving up to 10 messages at a time, so at most {@code threads} messages are handled at once.
 */
final class NaiveConsumer {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SqsClient sqs;
    private final DynamoDbClient dynamo;
    private final String jobsUrl;
    private final String noticesUrl;
    private final String idempotencyTable;
    private final AtomicBoolean stop = new AtomicBoolean();

    /** {@code idempotencyTable} null: the plain naive consumer. */
    NaiveConsumer(SqsClient sqs, DynamoDbClient dynamo, String jobsUrl, String noticesUrl, String idempotencyTable) {
        this.sqs = sqs;
        this.dynamo = dynamo;
        this.jobsUrl = jobsUrl;
        this.noticesUrl = noticesUrl;
        this.idempotencyTable = idempotencyTable;
    }

    List<Thread> start(int threads) {
        List<Thread> out = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = Thread.ofPlatform().name("bench-consumer-" + i).start(this::loop);
            out.add(t);
        }
        return out;
    }

    void stop(List<Thread> threads) throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
    }

    /** CPU time the consumer threads have used so far, in nanoseconds (read while they run). */
    long cpuNanos(List<Thread> threads) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (Thread t : threads) {
            long n = mx.getThreadCpuTime(t.threadId());
            total += Math.max(0, n);
        }
        return total;
    }

    private void loop() {
        while (!stop.get()) {
            List<Message> batch = sqs.receiveMessage(b -> b.queueUrl(jobsUrl).maxNumberOfMessages(10).waitTimeSeconds(1)
                    .messageAttributeNames("All")).messages();
            if (batch.isEmpty()) {
                continue;
            }
            List<DeleteMessageBatchRequestEntry> done = new ArrayList<>();
            for (Message m : batch) {
                handle(m);
                done.add(DeleteMessageBatchRequestEntry.builder().id("d" + done.size()).receiptHandle(m.receiptHandle()).build());
            }
            sqs.deleteMessageBatch(b -> b.queueUrl(jobsUrl).entries(done));
        }
    }

    private void handle(Message m) {
        String jobId = m.messageAttributes().get("job-id").stringValue();
        if (idempotencyTable != null) {
            try {
                claim(dynamo, idempotencyTable, jobId);
            } catch (ConditionalCheckFailedException seen) {
                return;
            }
        }
        String notice = work(jobId, m);
        // The notice poison-guard sends: the same body and the same three attributes.
        Map<String, MessageAttributeValue> in = m.messageAttributes();
        sqs.sendMessage(b -> b.queueUrl(noticesUrl).messageBody(notice).messageAttributes(Map.of(
                "job-id", in.get("job-id"), "tenant", in.get("tenant"), "job-type", in.get("job-type"))));
        if (idempotencyTable != null) {
            complete(dynamo, idempotencyTable, jobId);
        }
    }

    /** The idempotent baseline's write before the work: a conditional put of a two-attribute item. */
    static void claim(DynamoDbClient dynamo, String table, String jobId) {
        dynamo.putItem(b -> b.tableName(table).item(Map.of("jobId", AttributeValue.fromS(jobId), "status", AttributeValue.fromS("IN_PROGRESS")))
                .conditionExpression("attribute_not_exists(jobId)"));
    }

    /** The idempotent baseline's write after the work: one attribute updated. */
    static void complete(DynamoDbClient dynamo, String table, String jobId) {
        dynamo.updateItem(b -> b.tableName(table).key(Map.of("jobId", AttributeValue.fromS(jobId)))
                .updateExpression("SET #s = :done").expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(":done", AttributeValue.fromS("COMPLETED"))));
    }

    /**
     * Runs a baseline as a process of its own, as poison-guard runs: {@code sqsEndpoint dynamoEndpoint jobsUrl
     * noticesUrl table|- threads}. Reads commands on standard input: {@code counts} prints one line
     * {@code counts service.Operation=n,...} (requests put on the wire so far); {@code stop} or the end of
     * input stops the threads and exits.
     */
    public static void main(String[] args) throws Exception {
        try (SqsClient sqs = BenchIT.counted(SqsClient.builder(), args[0]); DynamoDbClient dynamo = BenchIT.counted(DynamoDbClient.builder(), args[1])) {
            NaiveConsumer consumer = new NaiveConsumer(sqs, dynamo, args[2], args[3], "-".equals(args[4]) ? null : args[4]);
            List<Thread> threads = consumer.start(Integer.parseInt(args[5]));
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null && !line.equals("stop"); line = in.readLine()) {
                if (line.equals("counts")) {
                    StringBuilder out = new StringBuilder("counts ");
                    io.poisonguard.observability.AwsRequestCounter.snapshot().forEach((k, v) -> out.append(k).append('=').append(v).append(','));
                    System.out.println(out);
                    System.out.flush();
                }
            }
            consumer.stop(threads);
        }
    }

    /**
     * The example handler's work, called as poison-guard's handler calls it minus what the service wraps around
     * its dependency (the circuit breaker and the quota pacer, which poison-guard's side of the bench pays).
     */
    private static String work(String jobId, Message m) {
        Map<String, MessageAttributeValue> a = m.messageAttributes();
        try {
            return WORK.notice(jobId, a.get("tenant").stringValue(), Integer.parseInt(a.get("schema-version").stringValue()), m.body(), 1, 1,
                    PERMIT_RECORDS::standing);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static final PermitReportWork WORK = new PermitReportWork(JSON, () -> false);

    /** The same simulated permit-records the example handler calls (no faults, no latency). */
    private static final SimulatedRecordsProvider PERMIT_RECORDS = new SimulatedRecordsProvider(new ExampleConfig() {
        @Override
        public boolean enabled() {
            return true;
        }

        @Override
        public boolean legacyReader() {
            return false;
        }

        @Override
        public Provider provider() {
            return new Provider() {
                @Override
                public double rate() {
                    return 10_000;
                }

                @Override
                public java.time.Duration latency() {
                    return java.time.Duration.ZERO;
                }

                @Override
                public Map<String, String> faults() {
                    return Map.of();
                }
            };
        }
    });
}

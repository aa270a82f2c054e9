package io.poisonguard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.example.permit.ExampleConfig;
import io.poisonguard.example.permit.PermitReportWork;
import io.poisonguard.example.permit.SimulatedRecordsProvider;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;

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
 * conditional put before the work and an update after it, on a table of its own. {@code ledger-floor} is the cheapest
 * consumer that keeps the two writes poison-guard's invariants need: a conditional put before each message's work (the
 * attempt durable before the handler runs), and after the receive's messages are handled, their notices in one
 * {@code SendMessageBatch}, then their completions in one {@code BatchWriteItem} (each recorded only once its notice was
 * accepted), then one {@code DeleteMessageBatch}. It keeps no lease, history, classes or effects: it is the floor under
 * any consumer that writes an attempt before its handler and its end after it, not a consumer anyone should run.
 * {@code threads} loops, each receiving up to 10 messages at a time, so at most {@code threads} messages are handled at
 * once.
 */
final class NaiveConsumer {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SqsClient sqs;
    private final DynamoDbClient dynamo;
    private final String jobsUrl;
    private final String noticesUrl;
    private final String idempotencyTable;
    private final Mode mode;
    private final AtomicBoolean stop = new AtomicBoolean();

    /** The baselines. */
    enum Mode {
        NAIVE("naive"), IDEMPOTENT("idempotent-naive"), LEDGER_FLOOR("ledger-floor");

        final String label;

        Mode(String label) {
            this.label = label;
        }

        /** Whether the baseline writes DynamoDB (and so needs a table of its own). */
        boolean writes() {
            return this != NAIVE;
        }

        static Mode of(String label) {
            for (Mode m : values()) {
                if (m.label.equals(label)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("no baseline named " + label);
        }
    }

    /** {@code idempotencyTable}: the table of a baseline that writes DynamoDB, null for the plain naive one. */
    NaiveConsumer(SqsClient sqs, DynamoDbClient dynamo, String jobsUrl, String noticesUrl, String idempotencyTable, Mode mode) {
        if (mode.writes() != (idempotencyTable != null)) {
            throw new IllegalArgumentException(mode.label + " with table " + idempotencyTable);
        }
        this.sqs = sqs;
        this.dynamo = dynamo;
        this.jobsUrl = jobsUrl;
        this.noticesUrl = noticesUrl;
        this.idempotencyTable = idempotencyTable;
        this.mode = mode;
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
            if (mode == Mode.LEDGER_FLOOR) {
                floor(batch);
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
        if (mode == Mode.IDEMPOTENT) {
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
        if (mode == Mode.IDEMPOTENT) {
            complete(dynamo, idempotencyTable, jobId);
        }
    }

    /**
     * The ledger floor's handling of one receive: each message's claim before its work, then the notices of those that ran
     * in one batch, the completions of those whose notice was accepted in one batch write, and one delete of the lot (a
     * copy whose claim failed is a duplicate: deleted unrun).
     */
    private void floor(List<Message> batch) {
        List<SendMessageBatchRequestEntry> notices = new ArrayList<>();
        List<String> ran = new ArrayList<>();
        java.util.Set<String> unsent = new java.util.HashSet<>();
        for (Message m : batch) {
            String jobId = m.messageAttributes().get("job-id").stringValue();
            try {
                claim(dynamo, idempotencyTable, jobId);
            } catch (ConditionalCheckFailedException seen) {
                continue;
            }
            Map<String, MessageAttributeValue> in = m.messageAttributes();
            notices.add(SendMessageBatchRequestEntry.builder().id("n" + notices.size()).messageBody(work(jobId, m)).messageAttributes(Map.of(
                    "job-id", in.get("job-id"), "tenant", in.get("tenant"), "job-type", in.get("job-type"))).build());
            ran.add(jobId);
        }
        if (!notices.isEmpty()) {
            SendMessageBatchResponse sent = sqs.sendMessageBatch(b -> b.queueUrl(noticesUrl).entries(notices));
            // A refused notice's job is not completed and its copy is kept, to come back.
            sent.failed().forEach(f -> unsent.add(ran.get(Integer.parseInt(f.id().substring(1)))));
            List<WriteRequest> completions = new ArrayList<>();
            for (var ok : sent.successful()) {
                String jobId = ran.get(Integer.parseInt(ok.id().substring(1)));
                completions.add(WriteRequest.builder().putRequest(PutRequest.builder().item(Map.of("jobId", AttributeValue.fromS(jobId),
                        "status", AttributeValue.fromS("COMPLETED"))).build()).build());
            }
            if (!completions.isEmpty()) {
                var left = dynamo.batchWriteItem(b -> b.requestItems(Map.of(idempotencyTable, completions))).unprocessedItems();
                if (!left.isEmpty()) {
                    dynamo.batchWriteItem(b -> b.requestItems(left));
                }
            }
        }
        List<DeleteMessageBatchRequestEntry> done = new ArrayList<>();
        for (Message m : batch) {
            if (!unsent.contains(m.messageAttributes().get("job-id").stringValue())) {
                done.add(DeleteMessageBatchRequestEntry.builder().id("d" + done.size()).receiptHandle(m.receiptHandle()).build());
            }
        }
        if (!done.isEmpty()) {
            sqs.deleteMessageBatch(b -> b.queueUrl(jobsUrl).entries(done));
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
     * noticesUrl table|- threads [mode]}, mode a {@link Mode}'s label (by default naive without a table, idempotent-naive
     * with one). Reads commands on standard input: {@code counts} prints one line
     * {@code counts service.Operation=n,...} (requests put on the wire so far); {@code stop} or the end of
     * input stops the threads and exits.
     */
    public static void main(String[] args) throws Exception {
        try (SqsClient sqs = BenchIT.counted(SqsClient.builder(), args[0]); DynamoDbClient dynamo = BenchIT.counted(DynamoDbClient.builder(), args[1])) {
            String table = "-".equals(args[4]) ? null : args[4];
            Mode mode = args.length > 6 ? Mode.of(args[6]) : table == null ? Mode.NAIVE : Mode.IDEMPOTENT;
            NaiveConsumer consumer = new NaiveConsumer(sqs, dynamo, args[2], args[3], table, mode);
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

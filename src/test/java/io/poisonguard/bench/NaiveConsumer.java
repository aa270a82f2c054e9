package io.poisonguard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The baselines poison-guard is measured against, doing the same work per message (parse the body,
 * digest it, send a completion notice) with the same SDK: {@code naive} receives, handles, sends the
 * notice and batch-deletes; {@code idempotent} adds what an idempotency library costs, a conditional put
 * before the work and an update after it, on a table of its own. {@code threads} loops, each receiving
 * up to 10 messages at a time, so at most {@code threads} messages are handled at once.
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
                dynamo.putItem(b -> b.tableName(idempotencyTable).item(Map.of("jobId", AttributeValue.fromS(jobId),
                                "status", AttributeValue.fromS("IN_PROGRESS")))
                        .conditionExpression("attribute_not_exists(jobId)"));
            } catch (ConditionalCheckFailedException seen) {
                return;
            }
        }
        String notice = work(jobId, m.body());
        sqs.sendMessage(b -> b.queueUrl(noticesUrl).messageBody(notice).messageAttributes(Map.of("job-id",
                MessageAttributeValue.builder().dataType("String").stringValue(jobId).build())));
        if (idempotencyTable != null) {
            dynamo.updateItem(b -> b.tableName(idempotencyTable).key(Map.of("jobId", AttributeValue.fromS(jobId)))
                    .updateExpression("SET #s = :done").expressionAttributeNames(Map.of("#s", "status"))
                    .expressionAttributeValues(Map.of(":done", AttributeValue.fromS("COMPLETED"))));
        }
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

    private static String work(String jobId, String body) {
        try {
            JsonNode permit = JSON.readTree(body);
            String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
            return JSON.writeValueAsString(Map.of("jobId", jobId, "permitId", permit.path("permitId").asText(), "reportSha256", digest));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

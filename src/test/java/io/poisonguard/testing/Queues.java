package io.poisonguard.testing;

import io.poisonguard.config.Names;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What a producer and a downstream consumer do with the queues, for tests. */
public final class Queues {
    private final SqsClient sqs;
    private final Names names;

    public Queues(SqsClient sqs, Names names) {
        this.sqs = sqs;
        this.names = names;
    }

    public String url(String name) {
        return sqs.getQueueUrl(b -> b.queueName(name)).queueUrl();
    }

    /**
     * Sends one job with String/Number attributes as given (Number for a numeric schema-version or attachment-count;
     * a value SQS would not take as a Number goes as a String, as a hostile sender would send it).
     */
    public String send(String body, Map<String, String> attributes) {
        return sqs.sendMessage(b -> b.queueUrl(url(names.jobsQueue())).messageBody(body).messageAttributes(sdk(attributes))).messageId();
    }

    public static Map<String, MessageAttributeValue> sdk(Map<String, String> attributes) {
        Map<String, MessageAttributeValue> out = new HashMap<>();
        attributes.forEach((k, v) -> {
            boolean number = (k.equals("schema-version") || k.equals("attachment-count")) && v.matches("-?\\d{1,30}");
            out.put(k, MessageAttributeValue.builder().dataType(number ? "Number" : "String").stringValue(v).build());
        });
        return out;
    }

    /** Permit-report attributes for a job. */
    public static Map<String, String> permitAttributes(String jobId, String tenant, int schemaVersion) {
        Map<String, String> a = new HashMap<>();
        a.put("job-id", jobId);
        a.put("tenant", tenant);
        a.put("job-type", "permit-report");
        a.put("schema-version", Integer.toString(schemaVersion));
        return a;
    }

    /** A current (v3) permit-report body. */
    public static String permitV3(String permitId) {
        return "{\"permitId\":\"" + permitId + "\",\"applicant\":{\"name\":\"Ada Builder\",\"address\":\"1 Main St\"},"
                + "\"inspections\":[{\"date\":\"2026-10-01\",\"result\":\"PASS\"},{\"date\":\"2026-10-20\",\"result\":\"FAIL\"}]}";
    }

    /** Release 27's (v1) permit-report body. */
    public static String permitV1(String permitId) {
        return "{\"id\":\"" + permitId + "\",\"owner\":\"Old Shape Ltd\",\"site\":\"9 Elm Rd\",\"checks\":\"2025-01-02:PASS;2025-02-03:PASS\"}";
    }

    /** Receives (and deletes) everything currently on a queue, waiting briefly for stragglers. */
    public List<Message> drain(String queueName) {
        String url = url(queueName);
        List<Message> all = new ArrayList<>();
        while (true) {
            List<Message> batch = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                    .messageAttributeNames("All").messageSystemAttributeNames(software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName.ALL)).messages();
            if (batch.isEmpty()) {
                return all;
            }
            all.addAll(batch);
            for (Message m : batch) {
                sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
            }
        }
    }

    /** Visible plus in-flight plus delayed messages on a queue. */
    public int depth(String queueName) {
        return depthOf(url(queueName));
    }

    /** Messages on the queue at {@code queueUrl}: visible, in flight and delayed. */
    public int depthOf(String queueUrl) {
        Map<QueueAttributeName, String> a = sqs.getQueueAttributes(b -> b.queueUrl(queueUrl).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED)).attributes();
        return a.values().stream().mapToInt(Integer::parseInt).sum();
    }

    public static String attr(Message m, String name) {
        MessageAttributeValue v = m.messageAttributes().get(name);
        return v == null ? null : v.stringValue();
    }
}

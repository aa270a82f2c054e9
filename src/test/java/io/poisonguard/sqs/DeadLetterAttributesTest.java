package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.failure.FailureClass;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeadLetterAttributesTest {

    @Test
    void aFullyAttributedReplayedJobKeepsEveryContractAttributeInItsDeadLetterCopy() {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>();
        for (String name : new String[]{"job-id", "tenant", "job-type", "charset", "content-transfer-encoding", "a-custom", "b-custom"}) {
            attrs.put(name, MessageAttribute.string(name + "-value"));
        }
        attrs.put("schema-version", MessageAttribute.number(3));
        attrs.put("attachment-count", MessageAttribute.number(2));
        attrs.put("generation", MessageAttribute.number(2));
        InboundMessage m = new InboundMessage("mid", "rh", "{}", attrs, Instant.EPOCH, 1, Instant.EPOCH);

        Map<String, MessageAttribute> dlq = SqsDeadLetterSink.deadLetterAttributes(m, "job-1", FailureClass.PERMANENT, 2, "why");

        assertEquals(10, dlq.size(), "SQS allows ten");
        assertTrue(dlq.keySet().containsAll(Set.of("job-id", "failure-class", "attempts", "quarantine-reason", "tenant", "job-type",
                "schema-version", "charset", "content-transfer-encoding", "attachment-count")), dlq.keySet().toString());
        assertEquals("tenant-value", dlq.get("tenant").stringValue());
    }

    @Test
    void customAttributesFillTheRoomTheContractLeaves() {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>();
        attrs.put("tenant", MessageAttribute.string("t"));
        attrs.put("job-type", MessageAttribute.string("x"));
        attrs.put("a-trace-id", MessageAttribute.string("abc"));
        InboundMessage m = new InboundMessage("mid", "rh", "{}", attrs, Instant.EPOCH, 1, Instant.EPOCH);

        Map<String, MessageAttribute> dlq = SqsDeadLetterSink.deadLetterAttributes(m, "job-1", FailureClass.CRASH, 3, "why");

        assertEquals("abc", dlq.get("a-trace-id").stringValue());
        assertEquals("3", dlq.get("attempts").stringValue());
        assertEquals("CRASH", dlq.get("failure-class").stringValue());
    }

    @Test
    void theDeadLetterCopyOfAReplayedJobKeepsItsGeneration() {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>();
        attrs.put("tenant", MessageAttribute.string("t"));
        attrs.put("job-type", MessageAttribute.string("x"));
        attrs.put("schema-version", MessageAttribute.number(3));
        attrs.put("generation", MessageAttribute.number(2));
        InboundMessage m = new InboundMessage("mid", "rh", "{}", attrs, Instant.EPOCH, 1, Instant.EPOCH);

        Map<String, MessageAttribute> dlq = SqsDeadLetterSink.deadLetterAttributes(m, "job-1", FailureClass.PERMANENT, 4, "why");

        assertEquals("2", dlq.get("generation").stringValue());
    }
}

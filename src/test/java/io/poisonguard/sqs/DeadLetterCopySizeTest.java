package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.admission.WireSize;
import io.poisonguard.failure.FailureClass;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The room admission keeps for the dead-letter copy is at least what this sink adds, at its worst. */
class DeadLetterCopySizeTest {

    @Test
    void theSinksReasonCapIsTheOneAdmissionBudgetsFor() {
        assertTrue(SqsDeadLetterSink.MAX_REASON_CHARS <= WireSize.DEAD_LETTER_REASON_CHARS);
    }

    @Test
    void aMessageJustUnderTheAdmissionLimitStillFitsSqsWithTheWorstCaseDeadLetterAttributes() {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>();
        attrs.put(WireAttributes.TENANT, MessageAttribute.string("acme"));
        attrs.put(WireAttributes.JOB_TYPE, MessageAttribute.string("permit-report"));
        attrs.put(WireAttributes.SCHEMA_VERSION, MessageAttribute.number(3));
        String jobId = "€".repeat(256);
        long admissible = WireSize.SQS_MAX_MESSAGE_BYTES - WireSize.DEAD_LETTER_ADDITIONS;
        String body = "x".repeat((int) (admissible - WireSize.of("", attrs)));
        InboundMessage m = new InboundMessage("mid", "rh", body, attrs, Instant.EPOCH, 1, Instant.EPOCH);
        assertEquals(admissible, WireSize.of(m));
        String longestClass = Arrays.stream(FailureClass.values()).map(Enum::name).max(Comparator.comparingInt(String::length)).orElseThrow();

        Map<String, MessageAttribute> copy = new LinkedHashMap<>(
                SqsDeadLetterSink.deadLetterAttributes(m, jobId, FailureClass.valueOf(longestClass), Integer.MIN_VALUE, "€".repeat(1000)));
        // Counted whether or not the sink keeps the generation today.
        copy.put(WireAttributes.GENERATION, MessageAttribute.number(Integer.MIN_VALUE));

        long copySize = WireSize.of(body, copy);
        assertTrue(copySize <= WireSize.SQS_MAX_MESSAGE_BYTES, copySize + " bytes");
    }

    /** The same for a copy given back from the dead-letter queue: its added job id and count of returns take no room. */
    @Test
    void aCopyGivenBackAtTheAdmissionLimitStillFitsSqsAsADeadLetterCopy() {
        Map<String, MessageAttribute> attrs = new LinkedHashMap<>();
        attrs.put(WireAttributes.TENANT, MessageAttribute.string("acme"));
        attrs.put(WireAttributes.JOB_TYPE, MessageAttribute.string("permit-report"));
        long admissible = WireSize.SQS_MAX_MESSAGE_BYTES - WireSize.DEAD_LETTER_ADDITIONS;
        String body = "x".repeat((int) (admissible - WireSize.of("", attrs)));
        attrs.put(WireAttributes.JOB_ID, MessageAttribute.string("0f8e3c2a-1b7d-4c55-9e21-6a4f0d9b8c71"));
        attrs.put(WireAttributes.DEAD_LETTER_RETURNS, MessageAttribute.string("3/12"));
        InboundMessage m = new InboundMessage("mid", "rh", body, attrs, Instant.EPOCH, 101, Instant.EPOCH);
        assertTrue(WireSize.deadLetterCopyFits(m), "admitted whole, so copied whole");

        Map<String, MessageAttribute> copy = new LinkedHashMap<>(
                SqsDeadLetterSink.deadLetterAttributes(m, "€".repeat(256), FailureClass.TRANSIENT, Integer.MIN_VALUE, "€".repeat(1000)));
        copy.put(WireAttributes.GENERATION, MessageAttribute.number(Integer.MIN_VALUE));

        long copySize = WireSize.of(body, copy);
        assertTrue(copySize <= WireSize.SQS_MAX_MESSAGE_BYTES, copySize + " bytes");
    }
}

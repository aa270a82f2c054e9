package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a replayed copy carries: never more than SQS's 10 attributes, and never without its identity and generation. */
class ReplayAttributesTest {

    private static Map<String, MessageAttribute> contract() {
        Map<String, MessageAttribute> a = new HashMap<>();
        a.put("job-id", MessageAttribute.string("j-1"));
        a.put("tenant", MessageAttribute.string("acme"));
        a.put("job-type", MessageAttribute.string("permit-report"));
        a.put("schema-version", MessageAttribute.number(1));
        return a;
    }

    @Test
    void aJobKeptWithTenAttributesIsReplayedWithItsIdentityTheGenerationTheContractsAndTheProducersFirstByName() {
        Map<String, MessageAttribute> kept = contract();
        for (String extra : List.of("x-6", "x-2", "x-5", "x-1", "x-4", "x-3")) {
            kept.put(extra, MessageAttribute.string("value of " + extra));
        }

        Map<String, MessageAttribute> sent = OperatorActions.replayAttributes("j-1", kept, 2);

        assertEquals(Set.of("job-id", "generation", "tenant", "job-type", "schema-version", "x-1", "x-2", "x-3", "x-4", "x-5"),
                sent.keySet());
        assertEquals("2", sent.get("generation").stringValue());
    }

    @Test
    void aDeadLetterCopysQuarantineAttributesAndOldGenerationGiveWayToTheReplaysOwn() {
        Map<String, MessageAttribute> copy = contract();
        copy.put("job-id", MessageAttribute.string("stale"));
        copy.put("generation", MessageAttribute.number(1));
        copy.put("failure-class", MessageAttribute.string("PERMANENT"));
        copy.put("attempts", MessageAttribute.number(3));
        copy.put("quarantine-reason", MessageAttribute.string("schema version 1"));
        copy.put("charset", MessageAttribute.string("UTF-8"));

        Map<String, MessageAttribute> sent = OperatorActions.replayAttributes("j-1", copy, 4);

        assertEquals(Set.of("job-id", "generation", "tenant", "job-type", "schema-version", "charset"), sent.keySet());
        assertEquals("j-1", sent.get("job-id").stringValue());
        assertEquals("4", sent.get("generation").stringValue());
    }
}

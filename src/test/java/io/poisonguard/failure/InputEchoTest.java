package io.poisonguard.failure;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parser errors quote the input; what is stored must not. */
class InputEchoTest {

    @Test
    void aJsonParseErrorKeepsItsPositionButNotTheTokenItQuoted() {
        Exception thrown = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
                () -> new ObjectMapper().readTree("{\"apiKey\": sk_live_51Habcdefghijklmnop}"));
        Failure f = new Classifier(List.of(new ClassificationRule(com.fasterxml.jackson.core.JsonProcessingException.class,
                FailureClass.PERMANENT)), FailureClass.TRANSIENT, 200).classify(thrown);

        assertEquals(FailureClass.PERMANENT, f.failureClass());
        assertFalse(f.message().contains("sk_live"), f.message());
        assertTrue(f.message().startsWith("input is not valid JSON at line 1"), f.message());
    }

    @Test
    void singleQuotedRunsAreMaskedInAnyMessage() {
        String s = Scrubber.scrub("Unrecognized token 'sk_live_51Habcdefghijklmnop': was expecting", 200);
        assertFalse(s.contains("sk_live"), s);
    }
}

package io.poisonguard.effects;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordedEffectsTest {
    @Test
    void anEffectTheJobAlreadyPerformedIsSkippedAndANewOneIsRememberedWithItsAttempt() {
        AtomicInteger sent = new AtomicInteger();
        RecordedEffects effects = new RecordedEffects(Set.of("old-notice"), 4);
        assertFalse(effects.once("old-notice", sent::incrementAndGet), "recorded by an earlier attempt");
        assertTrue(effects.once("notice", sent::incrementAndGet));
        assertFalse(effects.once("notice", sent::incrementAndGet), "once within the attempt too");
        assertEquals(1, sent.get());
        assertEquals(Map.of("notice", 4), effects.end());
    }

    @Test
    void anEffectThatThrowsIsNotRecorded() {
        RecordedEffects effects = new RecordedEffects(Set.of(), 1);
        assertThrows(IllegalStateException.class, () -> effects.once("notice", () -> {
            throw new IllegalStateException("the queue refused it");
        }));
        assertEquals(Map.of(), effects.end());
    }

    @Test
    void afterItsAttemptEndedNoEffectStarts() {
        AtomicInteger sent = new AtomicInteger();
        RecordedEffects effects = new RecordedEffects(Set.of(), 2);
        effects.end();
        assertThrows(IllegalStateException.class, () -> effects.once("notice", sent::incrementAndGet),
                "a handler cut off by its deadline cannot send what would go unrecorded");
        assertEquals(0, sent.get());
    }
}

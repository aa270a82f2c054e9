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

    @Test
    void anEffectDeferredToSuccessRunsOnlyWhenPerformedAndIsThenRecorded() {
        AtomicInteger sent = new AtomicInteger();
        RecordedEffects effects = new RecordedEffects(Set.of("old-notice"), 3);
        assertFalse(effects.onceOnSuccess("old-notice", sent::incrementAndGet), "recorded by an earlier attempt");
        assertTrue(effects.onceOnSuccess("notice", sent::incrementAndGet));
        assertFalse(effects.onceOnSuccess("notice", sent::incrementAndGet), "asked for once already");
        assertFalse(effects.once("notice", sent::incrementAndGet), "nor performed at once beside its deferred self");
        assertEquals(0, sent.get(), "the handler does not wait for it");
        assertEquals(Map.of(), effects.end(), "not performed yet when the handler ends");
        assertTrue(effects.hasDeferred());
        effects.performDeferred();
        assertEquals(1, sent.get());
        assertEquals(Map.of("notice", 3), effects.performed());
    }

    @Test
    void aDeferredEffectThatThrowsStopsTheOnesAfterItAndOnlyTheOnesBeforeItAreRecorded() {
        java.util.List<String> ran = new java.util.ArrayList<>();
        RecordedEffects effects = new RecordedEffects(Set.of(), 1);
        effects.onceOnSuccess("first", () -> ran.add("first"));
        effects.onceOnSuccess("second", () -> {
            throw new IllegalStateException("the queue refused it");
        });
        effects.onceOnSuccess("third", () -> ran.add("third"));
        effects.end();
        assertThrows(IllegalStateException.class, effects::performDeferred);
        assertEquals(java.util.List.of("first"), ran);
        assertEquals(Map.of("first", 1), effects.performed());
    }

    @Test
    void deferredEffectsOfAHandlerThatDidNotSucceedAreDroppedUnperformed() {
        AtomicInteger sent = new AtomicInteger();
        RecordedEffects effects = new RecordedEffects(Set.of(), 2);
        effects.onceOnSuccess("notice", sent::incrementAndGet);
        effects.end();
        effects.dropDeferred();
        effects.performDeferred();
        assertEquals(0, sent.get());
        assertEquals(Map.of(), effects.performed());
        assertThrows(IllegalStateException.class, () -> effects.onceOnSuccess("late", sent::incrementAndGet),
                "after its attempt ended, a handler cannot defer what would go unrecorded");
    }
}

package io.poisonguard.effects;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LedgeredEffectsTest {
    final Clock clock = Clock.fixed(Instant.parse("2026-06-01T00:00:00Z"), ZoneOffset.UTC);

    /** A store that answers claims as told and fails the first {@code failures} completions. */
    static final class Store implements EffectStore {
        Claim answer = Claim.GRANTED;
        int failures;
        final AtomicInteger completes = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();

        @Override
        public Claim claim(String jobId, String effect, String owner, Instant now, Instant until, Instant expiresAt) {
            return answer;
        }

        @Override
        public void complete(String jobId, String effect, String owner, Instant now) {
            if (completes.incrementAndGet() <= failures) {
                throw new IllegalStateException("store unavailable");
            }
        }

        @Override
        public void release(String jobId, String effect, String owner) {
            releases.incrementAndGet();
        }
    }

    private LedgeredEffects effects(Store store) {
        return new LedgeredEffects(store, clock, "job-1", "w1#1.1", Duration.ofSeconds(60), Duration.ofDays(21));
    }

    @Test
    void aGrantedEffectRunsOnceAndIsRecordedEvenWhenTheFirstRecordAttemptFails() {
        Store store = new Store();
        store.failures = 1;
        AtomicInteger sent = new AtomicInteger();
        assertTrue(effects(store).once("notice", sent::incrementAndGet));
        assertEquals(1, sent.get());
        assertEquals(2, store.completes.get(), "recorded on the second try");
    }

    @Test
    void aDoneEffectIsNotPerformedAgain() {
        Store store = new Store();
        store.answer = EffectStore.Claim.DONE;
        AtomicInteger sent = new AtomicInteger();
        assertFalse(effects(store).once("notice", sent::incrementAndGet));
        assertEquals(0, sent.get());
    }

    @Test
    void anEffectHeldByAnotherAttemptIsATransientFailure() {
        Store store = new Store();
        store.answer = EffectStore.Claim.BUSY;
        assertThrows(EffectBusy.class, () -> effects(store).once("notice", () -> { }));
    }

    @Test
    void aFailedEffectGivesItsClaimBack() {
        Store store = new Store();
        assertThrows(IllegalStateException.class, () -> effects(store).once("notice", () -> {
            throw new IllegalStateException("queue down");
        }));
        assertEquals(1, store.releases.get());
        assertEquals(0, store.completes.get());
    }
}

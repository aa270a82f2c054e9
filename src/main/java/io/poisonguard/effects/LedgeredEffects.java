package io.poisonguard.effects;

import io.poisonguard.handler.JobContext;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The {@link JobContext} of one attempt: effects go through the effect ledger, claimed by this
 * attempt (worker and attempt number) for one lease.
 */
public final class LedgeredEffects implements JobContext {
    static final int COMPLETE_TRIES = 3;
    private final EffectStore store;
    private final Clock clock;
    private final String jobId;
    private final String owner;
    private final Duration lease;
    private final Duration retention;

    public LedgeredEffects(EffectStore store, Clock clock, String jobId, String owner, Duration lease, Duration retention) {
        this.store = store;
        this.clock = clock;
        this.jobId = jobId;
        this.owner = owner;
        this.lease = lease;
        this.retention = retention;
    }

    @Override
    public boolean once(String effectName, Runnable effect) {
        Instant now = clock.instant();
        return switch (store.claim(jobId, effectName, owner, now, now.plus(lease), now.plus(retention))) {
            case DONE -> false;
            case BUSY -> throw new EffectBusy(jobId, effectName);
            case GRANTED -> perform(effectName, effect);
        };
    }

    private boolean perform(String effectName, Runnable effect) {
        try {
            effect.run();
        } catch (RuntimeException e) {
            store.release(jobId, effectName, owner);
            throw e;
        }
        markDone(effectName);
        return true;
    }

    /**
     * The effect happened; if recording that fails, a later attempt would perform it again once the
     * claim runs out. So the record is retried a few times before the failure is let through.
     */
    private void markDone(String effectName) {
        RuntimeException last = null;
        for (int i = 0; i < COMPLETE_TRIES; i++) {
            try {
                store.complete(jobId, effectName, owner, clock.instant());
                return;
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw last;
    }
}

package io.poisonguard.effects;

import io.poisonguard.handler.JobContext;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link JobContext} of one attempt. Effects the job performed before (as its ledger record names
 * them) are skipped; an effect performed now is remembered and recorded by the same ledger write that
 * ends the attempt, so a healthy message costs no write for its effects. An effect that throws is not
 * recorded (a later attempt performs it again); one that succeeded but whose attempt dies before its end
 * is written is performed again too, which is why the notices queue can be FIFO with a deduplication id.
 * Once the attempt has ended (its outcome is being written) no effect starts: a handler cut off by its
 * deadline cannot perform one that would go unrecorded. Effects deferred to the handler's success
 * ({@link #onceOnSuccess}) wait here, in the order they were asked for, until {@link #performDeferred}.
 */
public final class RecordedEffects implements JobContext {
    private final Set<String> before;
    private final int attempt;
    private final Map<String, Integer> performed = new ConcurrentHashMap<>();
    /** Deferred effects by name, in the order the handler asked for them. */
    private final Map<String, Runnable> deferred = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>());
    private volatile boolean ended;

    /**
     * @param before  effects the job already performed (its ledger record's)
     * @param attempt the attempt number recorded beside each effect performed now
     */
    public RecordedEffects(Set<String> before, int attempt) {
        this.before = Set.copyOf(before);
        this.attempt = attempt;
    }

    @Override
    public boolean once(String effectName, Runnable effect) {
        if (known(effectName)) {
            return false;
        }
        refuseIfEnded(effectName);
        effect.run();
        performed.put(effectName, attempt);
        return true;
    }

    @Override
    public boolean onceOnSuccess(String effectName, Runnable effect) {
        if (known(effectName)) {
            return false;
        }
        refuseIfEnded(effectName);
        return deferred.putIfAbsent(effectName, effect) == null;
    }

    private boolean known(String effectName) {
        return before.contains(effectName) || performed.containsKey(effectName) || deferred.containsKey(effectName);
    }

    private void refuseIfEnded(String effectName) {
        if (ended) {
            throw new IllegalStateException("attempt " + attempt + " has ended; effect " + effectName + " was not performed");
        }
    }

    /** Stops new effects and returns those performed by this attempt so far, name to attempt number. */
    public Map<String, Integer> end() {
        ended = true;
        return performed();
    }

    /** Effects performed by this attempt, name to attempt number. */
    public Map<String, Integer> performed() {
        return Map.copyOf(performed);
    }

    /** Whether effects wait for the handler's success. */
    public boolean hasDeferred() {
        return !deferred.isEmpty();
    }

    /**
     * Performs the deferred effects in order, each remembered as it succeeds; the first that throws stops the rest
     * (they stay unperformed) and its exception propagates. Called once the handler has returned normally.
     */
    public void performDeferred() {
        List<Map.Entry<String, Runnable>> waiting;
        synchronized (deferred) {
            waiting = List.copyOf(deferred.entrySet());
            deferred.clear();
        }
        for (Map.Entry<String, Runnable> e : waiting) {
            e.getValue().run();
            performed.put(e.getKey(), attempt);
        }
    }

    /** Drops the deferred effects unperformed: the handler did not return normally. */
    public void dropDeferred() {
        deferred.clear();
    }
}

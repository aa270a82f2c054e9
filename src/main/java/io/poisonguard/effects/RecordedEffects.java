package io.poisonguard.effects;

import io.poisonguard.handler.JobContext;

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
 * deadline cannot perform one that would go unrecorded.
 */
public final class RecordedEffects implements JobContext {
    private final Set<String> before;
    private final int attempt;
    private final Map<String, Integer> performed = new ConcurrentHashMap<>();
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
        if (before.contains(effectName) || performed.containsKey(effectName)) {
            return false;
        }
        if (ended) {
            throw new IllegalStateException("attempt " + attempt + " has ended; effect " + effectName + " was not performed");
        }
        effect.run();
        performed.put(effectName, attempt);
        return true;
    }

    /** Stops new effects and returns those performed by this attempt, name to attempt number. */
    public Map<String, Integer> end() {
        ended = true;
        return Map.copyOf(performed);
    }
}

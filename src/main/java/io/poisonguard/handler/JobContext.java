package io.poisonguard.handler;

/** Services a handler may use while it runs. */
public interface JobContext {

    /**
     * Performs {@code effect} at most once per job and effect name, across duplicates, retries and
     * replays. Returns true when it ran now, false when it had already been performed.
     */
    boolean once(String effectName, Runnable effect);
}

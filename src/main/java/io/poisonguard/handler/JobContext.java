package io.poisonguard.handler;

/** Services a handler may use while it runs. */
public interface JobContext {

    /**
     * Performs {@code effect} at most once per job and effect name, across duplicates, retries and
     * replays. Returns true when it ran now, false when it had already been performed.
     */
    boolean once(String effectName, Runnable effect);

    /**
     * Performs {@code effect} at most once per job and effect name, as {@link #once} does, but only once the
     * handler has returned normally: after the handler, outside its working slot (the next job's handler may
     * already run) and before the attempt's end is recorded, which records the effect with it. The handler does
     * not wait for it. Use it for what the job tells the world when it is done (a completion notice): it is never
     * sent for an attempt that then throws. If the effect throws, the attempt fails as if the handler had thrown
     * that, classified the same way, and effects deferred after it are not performed. Returns true when this
     * attempt will perform it if the handler returns, false when it had already been performed.
     */
    boolean onceOnSuccess(String effectName, Runnable effect);
}

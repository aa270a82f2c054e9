package io.poisonguard.pipeline;

import java.time.Duration;

/** Where an attempt's handler runs, as the attempt sees it: whether it still runs, a wait for its end, and its interrupt. */
interface HandlerThread {
    /** Whether the handler has not ended yet (started or about to). */
    boolean isAlive();

    /** Waits up to {@code wait} for the handler to end; whether it did. */
    boolean join(Duration wait) throws InterruptedException;

    /** Interrupts the handler, if it still runs. */
    void interrupt();

    /** A plain thread seen as a handler's (a job's own thread, for its deferred effects). */
    static HandlerThread of(Thread thread) {
        return new HandlerThread() {
            @Override
            public boolean isAlive() {
                return thread.isAlive();
            }

            @Override
            public boolean join(Duration wait) throws InterruptedException {
                return thread.join(wait);
            }

            @Override
            public void interrupt() {
                thread.interrupt();
            }
        };
    }
}

package io.poisonguard.pipeline;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * How many handlers are running in this worker now. The notice batcher reads it: a batch waits for company
 * only while some running handler has not sent yet, since no one else can join it.
 */
@ApplicationScoped
public class HandlersRunning implements IntSupplier {
    private final AtomicInteger running = new AtomicInteger();

    void started() {
        running.incrementAndGet();
    }

    void ended() {
        running.decrementAndGet();
    }

    @Override
    public int getAsInt() {
        return running.get();
    }
}

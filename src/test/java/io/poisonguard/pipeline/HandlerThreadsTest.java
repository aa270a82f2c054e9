package io.poisonguard.pipeline;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Handlers' platform threads: an interrupt reaches the run it was meant for and no later one, and a stuck run keeps its thread. */
class HandlerThreadsTest {
    private final HandlerThreads threads = new HandlerThreads();

    @Test
    void aHandlerRunsOnAPlatformThread() throws Exception {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        HandlerThreads.Handle one = threads.unstarted(() -> ranOn.set(Thread.currentThread()));
        assertTrue(one.isAlive(), "not started is not ended");
        one.start();
        assertTrue(one.join(Duration.ofSeconds(5)));
        assertFalse(one.isAlive());
        assertFalse(ranOn.get().isVirtual(), "a platform thread, which the OS preempts");
        assertTrue(ranOn.get().isDaemon(), "a handler that never returns does not hold the process up");
    }

    @Test
    void anInterruptReachesTheRunningHandlerAndNotTheNextRunOnItsThread() throws Exception {
        HandlerThreads threads = new HandlerThreads(java.util.concurrent.Executors.newSingleThreadExecutor());
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        HandlerThreads.Handle sleeper = threads.unstarted(() -> {
            ranOn.set(Thread.currentThread());
            started.countDown();
            try {
                Thread.sleep(Duration.ofMinutes(1));
            } catch (InterruptedException e) {
                interrupted.set(true);
                // Left set on purpose: a handler that swallows nothing must not hand its interrupt to the next one.
                Thread.currentThread().interrupt();
            }
        });
        sleeper.start();
        assertTrue(started.await(5, TimeUnit.SECONDS));
        assertTrue(sleeper.isAlive());
        sleeper.interrupt();
        assertTrue(sleeper.join(Duration.ofSeconds(5)), "the interrupted handler ended");
        assertTrue(interrupted.get());
        // A late interrupt of a run that ended reaches nobody.
        sleeper.interrupt();

        AtomicBoolean nextSawInterrupt = new AtomicBoolean(true);
        AtomicReference<Thread> nextOn = new AtomicReference<>();
        HandlerThreads.Handle next = threads.unstarted(() -> {
            nextOn.set(Thread.currentThread());
            nextSawInterrupt.set(Thread.currentThread().isInterrupted());
        });
        next.start();
        assertTrue(next.join(Duration.ofSeconds(5)));
        assertFalse(nextSawInterrupt.get(), "the next run on the same thread started interrupted");
        assertSame(ranOn.get(), nextOn.get(), "the check ran on the interrupted run's own thread");
    }

    @Test
    void anInterruptAskedBeforeTheHandlerStartsIsDeliveredAsItStarts() throws Exception {
        AtomicBoolean interruptedAtStart = new AtomicBoolean();
        HandlerThreads.Handle h = threads.unstarted(() -> interruptedAtStart.set(Thread.currentThread().isInterrupted()));
        h.interrupt();
        assertTrue(h.isAlive(), "not started is not ended");
        h.start();
        assertTrue(h.join(Duration.ofSeconds(5)));
        assertTrue(interruptedAtStart.get());
    }

    @Test
    void aHandlerThatNeverReturnsKeepsItsThreadAndTheNextOneGetsAnother() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Thread> stuckOn = new AtomicReference<>();
        CountDownLatch stuckStarted = new CountDownLatch(1);
        HandlerThreads.Handle stuck = threads.unstarted(() -> {
            stuckOn.set(Thread.currentThread());
            stuckStarted.countDown();
            while (release.getCount() > 0) {
                Thread.interrupted(); // deaf to its interrupt
                try {
                    release.await();
                } catch (InterruptedException ignored) {
                    // keeps waiting
                }
            }
        });
        try {
            stuck.start();
            assertTrue(stuckStarted.await(5, TimeUnit.SECONDS));
            stuck.interrupt();
            assertFalse(stuck.join(Duration.ofMillis(200)), "still running");
            AtomicReference<Thread> other = new AtomicReference<>();
            HandlerThreads.Handle next = threads.unstarted(() -> other.set(Thread.currentThread()));
            next.start();
            assertTrue(next.join(Duration.ofSeconds(5)), "the next handler ran beside the stuck one");
            assertNotSame(stuckOn.get(), other.get());
        } finally {
            release.countDown();
        }
        assertTrue(stuck.join(Duration.ofSeconds(5)));
    }
}

package io.poisonguard.pipeline;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The platform threads handlers run on, kept for reuse. A handler is the job's own code, and a poison input can send
 * it round a loop on the CPU for good, deaf to its interrupt. On a virtual thread such a handler keeps its carrier, and
 * virtual threads are not preempted: as many of them as there are carriers stopped every other job of the worker
 * (intakes, outcomes and lease renewals run on virtual threads too). A platform thread is time-sliced by the OS, so
 * a handler that spins costs a core's share, not the worker. Threads are reused (an idle one for a minute), so a message
 * does not pay for a new thread and its stack; a thread whose handler never returns is simply never reused, and the next
 * handler gets another.
 */
final class HandlerThreads {
    private final ExecutorService threads;

    HandlerThreads() {
        this(Executors.newCachedThreadPool(Thread.ofPlatform().daemon().name("poison-guard-handler-", 0).factory()));
    }

    /** Handlers on {@code threads} (a test's single thread, to see what one run leaves to the next). */
    HandlerThreads(ExecutorService threads) {
        this.threads = threads;
    }

    /**
     * {@code body}'s run on a handler thread, to be started ({@link Handle#start}); the handle tells when it ended and
     * interrupts it while it runs (an interrupt before it starts is delivered as it starts).
     */
    Handle unstarted(Runnable body) {
        return new Handle(body);
    }

    /** One handler's run on a pooled thread: interrupted only while its own body runs, never the thread's next one. */
    final class Handle implements HandlerThread, Runnable {
        private final Runnable body;
        private final CountDownLatch ended = new CountDownLatch(1);
        /** The thread running the body; null before it starts and once it ended. Guarded by this. */
        private Thread runner;
        /** An interrupt asked for before the body started. Guarded by this. */
        private boolean interruptAsked;

        private Handle(Runnable body) {
            this.body = body;
        }

        void start() {
            threads.execute(this);
        }

        @Override
        public void run() {
            synchronized (this) {
                runner = Thread.currentThread();
                if (interruptAsked) {
                    runner.interrupt();
                }
            }
            try {
                body.run();
            } finally {
                synchronized (this) {
                    runner = null;
                }
                // An interrupt meant for this run must not reach the next handler the thread takes.
                Thread.interrupted();
                ended.countDown();
            }
        }

        @Override
        public synchronized void interrupt() {
            interruptAsked = true;
            if (runner != null) {
                runner.interrupt();
            }
        }

        @Override
        public boolean isAlive() {
            return ended.getCount() > 0;
        }

        @Override
        public boolean join(Duration wait) throws InterruptedException {
            return ended.await(wait.toNanos(), TimeUnit.NANOSECONDS);
        }
    }
}

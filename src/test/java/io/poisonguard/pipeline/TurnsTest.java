package io.poisonguard.pipeline;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TurnsTest {
    private static final long FAR = TimeUnit.MINUTES.toNanos(10);
    private Turns turns;
    private final java.util.Map<String, Thread> threads = new java.util.concurrent.ConcurrentHashMap<>();

    @BeforeEach
    void open() {
        turns = new Turns(1, Duration.ofMillis(10));
        turns.open();
    }

    @AfterEach
    void close() {
        turns.close();
    }

    /** A thread that waits for a slot (deadline {@code inNanos} from now) and records whether it got one. */
    private CompletableFuture<Boolean> waiter(long inNanos, List<String> order, String name) {
        CompletableFuture<Boolean> got = new CompletableFuture<>();
        threads.put(name, Thread.ofVirtual().name(name).start(() -> {
            try {
                boolean taken = turns.take(System.nanoTime() + inNanos);
                if (taken) {
                    order.add(name);
                }
                got.complete(taken);
            } catch (Throwable e) {
                got.completeExceptionally(e);
            }
        }));
        return got;
    }

    @Test
    void aWaitingMessageParksWithoutATimer() throws Exception {
        assertTrue(turns.tryTake());
        List<String> order = new ArrayList<>();
        CompletableFuture<Boolean> a = waiter(FAR, order, "a");
        await().until(() -> turns.waiting() == 1);
        Thread t = threads.get("a");
        // A timed wait (a semaphore's tryAcquire with a timeout) shows as TIMED_WAITING: a timer armed per message.
        await().until(() -> t.getState() == Thread.State.WAITING);
        turns.release();
        assertTrue(a.get(5, TimeUnit.SECONDS));
        assertEquals(0, turns.free(), "the freed slot went to the waiter, not back to the free ones");
    }

    @Test
    void slotsGoToWaitersInTheOrderTheyAskedAndNotToANewcomer() throws Exception {
        assertTrue(turns.tryTake());
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        CompletableFuture<Boolean> a = waiter(FAR, order, "first");
        await().until(() -> turns.waiting() == 1);
        CompletableFuture<Boolean> b = waiter(FAR, order, "second");
        await().until(() -> turns.waiting() == 2);
        turns.release();
        assertTrue(a.get(5, TimeUnit.SECONDS));
        assertFalse(turns.tryTake(), "a newcomer does not take a slot while others wait");
        turns.release();
        assertTrue(b.get(5, TimeUnit.SECONDS));
        assertEquals(List.of("first", "second"), order);
        turns.release();
        assertEquals(1, turns.free());
    }

    @Test
    void aWaitEndsUnansweredOnceItsDeadlinePassesAndTheSlotCountStaysRight() throws Exception {
        assertTrue(turns.tryTake());
        List<String> order = new ArrayList<>();
        CompletableFuture<Boolean> late = waiter(TimeUnit.MILLISECONDS.toNanos(100), order, "late");
        assertFalse(late.get(5, TimeUnit.SECONDS), "given up by the watcher, no release needed");
        assertEquals(0, turns.waiting());
        assertEquals(0, turns.free(), "the slot is still held by its holder");
        turns.release();
        assertEquals(1, turns.free());
    }

    @Test
    void aReleaseSkipsAWaiterWhoseDeadlinePassedBeforeTheWatcherSawIt() throws Exception {
        Turns slow = new Turns(1, Duration.ofHours(1)); // the watcher would not look for an hour
        slow.open();
        try {
            assertTrue(slow.tryTake());
            CompletableFuture<Boolean> expired = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    expired.complete(slow.take(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20)));
                } catch (InterruptedException e) {
                    expired.completeExceptionally(e);
                }
            });
            await().until(() -> slow.waiting() == 1);
            await().pollDelay(Duration.ofMillis(30)).until(() -> true);
            slow.release();
            assertFalse(expired.get(5, TimeUnit.SECONDS));
            assertEquals(1, slow.free(), "the slot went back to the free ones, not to the expired wait");
        } finally {
            slow.close();
        }
    }

    @Test
    void anInterruptedWaitHoldsNoSlot() throws Exception {
        assertTrue(turns.tryTake());
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                turns.take(System.nanoTime() + FAR);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        await().until(() -> turns.waiting() == 1);
        t.interrupt();
        assertTrue(outcome.get(5, TimeUnit.SECONDS) instanceof InterruptedException);
        assertEquals(0, turns.waiting());
        turns.release();
        assertEquals(1, turns.free());
    }

    @Test
    void closingEndsEveryWaitAndRefusesNewOnesUntilOpenedAgain() throws Exception {
        assertTrue(turns.tryTake());
        List<String> order = new ArrayList<>();
        CompletableFuture<Boolean> a = waiter(FAR, order, "a");
        await().until(() -> turns.waiting() == 1);
        turns.close();
        assertFalse(a.get(5, TimeUnit.SECONDS));
        assertFalse(turns.take(System.nanoTime() + FAR), "closed: no wait");
        turns.release();
        turns.open();
        assertTrue(turns.take(System.nanoTime() + FAR), "the released slot is free again");
    }

    @Test
    void neverMoreHoldersThanSlotsUnderContention() throws Exception {
        Turns three = new Turns(3, Duration.ofMillis(10));
        three.open();
        try {
            AtomicInteger holding = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    try {
                        for (int j = 0; j < 200; j++) {
                            if (three.take(System.nanoTime() + FAR)) {
                                most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                                Thread.yield();
                                holding.decrementAndGet();
                                three.release();
                                done.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            for (Thread t : threads) {
                t.join(Duration.ofSeconds(30));
            }
            assertTrue(errors.isEmpty(), errors.toString());
            assertEquals(16 * 200, done.get(), "every take with a far deadline got its slot");
            assertTrue(most.get() <= 3, "at most three at once: " + most.get());
            assertEquals(3, three.free());
        } finally {
            three.close();
        }
    }

    @Test
    void theTickIsATenthOfTheLongestWaitWithinBounds() {
        assertEquals(Duration.ofSeconds(1), Turns.tickFor(Duration.ofSeconds(15)));
        assertEquals(Duration.ofMillis(500), Turns.tickFor(Duration.ofSeconds(5)));
        assertEquals(Duration.ofMillis(10), Turns.tickFor(Duration.ofMillis(50)));
        assertThrows(IllegalArgumentException.class, () -> new Turns(0, Duration.ofMillis(10)));
    }
}

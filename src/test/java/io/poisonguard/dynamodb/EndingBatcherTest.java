package io.poisonguard.dynamodb;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The batches of succeeded endings: writers that finish together share a {@code BatchWriteItem}, a lone one is not kept
 * waiting, nothing goes after its send-by, and every failure gives the item back to its writer (who then writes it with its
 * condition) instead of losing it or leaving the writer waiting.
 */
@org.junit.jupiter.api.Timeout(60)
class EndingBatcherTest {
    private static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    /** A wire that answers as {@code answer} says (the items it leaves unprocessed); every batch it is sent is kept, by ids. */
    private record Wire(EndingBatcher.Wire wire, List<List<String>> sent) {
    }

    private static Wire wire(Function<List<Map<String, AttributeValue>>, List<Map<String, AttributeValue>>> answer) {
        List<List<String>> sent = new CopyOnWriteArrayList<>();
        EndingBatcher.Wire w = (items, callTimeout) -> {
            assertTrue(callTimeout.compareTo(EndingBatcher.SHORTEST_CALL) >= 0 && callTimeout.compareTo(EndingBatcher.LONGEST_CALL) <= 0,
                    "call timeout " + callTimeout);
            sent.add(items.stream().map(i -> i.get("jobId").s()).toList());
            return answer.apply(items);
        };
        return new Wire(w, sent);
    }

    private static Map<String, AttributeValue> item(String id) {
        return Map.of("jobId", AttributeValue.fromS(id), "version", AttributeValue.fromN("2"));
    }

    private static final List<Map<String, AttributeValue>> ALL_WRITTEN = List.of();

    @Test
    void aLoneWriterSendsAtOnceAndWritersThatFinishWhileABatchIsOnTheWireShareTheNext() throws Exception {
        CountDownLatch firstOnTheWire = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        Wire wire = wire(r -> {
            if (first.getAndSet(false)) {
                firstOnTheWire.countDown();
                try {
                    releaseFirst.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return ALL_WRITTEN;
        });
        EndingBatcher batcher = new EndingBatcher(wire.wire(), "jobId", CLOCK, 1);
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            Future<EndingBatcher.Result> lone = threads.submit(() -> batcher.put(item("job-0"), NOW.plusSeconds(30)));
            assertTrue(firstOnTheWire.await(10, TimeUnit.SECONDS), "a lone writer's item goes without waiting for company");
            List<Future<EndingBatcher.Result>> later = new ArrayList<>();
            for (int i = 1; i <= 30; i++) {
                String id = "job-" + i;
                later.add(threads.submit(() -> batcher.put(item(id), NOW.plusSeconds(30))));
            }
            // All thirty queue behind the batch on the wire (its one turn is taken).
            await().atMost(Duration.ofSeconds(10)).until(() -> queuedBehind(batcher) == 30);
            assertEquals(1, wire.sent().size());
            releaseFirst.countDown();
            assertEquals(EndingBatcher.Result.WRITTEN, lone.get(10, TimeUnit.SECONDS));
            for (Future<EndingBatcher.Result> f : later) {
                assertEquals(EndingBatcher.Result.WRITTEN, f.get(10, TimeUnit.SECONDS));
            }
        }
        List<List<String>> batches = wire.sent();
        assertEquals(List.of("job-0"), batches.get(0));
        assertTrue(batches.stream().allMatch(b -> b.size() <= EndingBatcher.MAX_ITEMS), "BatchWriteItem takes 25 at most: " + batches);
        assertEquals(31, batches.stream().mapToInt(List::size).sum(), "every item is sent once: " + batches);
        assertTrue(batches.size() <= 4, "the thirty that finished together went in few batches, not one each: " + batches);
    }

    @Test
    void anItemWhoseTurnComesAfterItsSendByIsNotSent() {
        Wire wire = wire(r -> ALL_WRITTEN);
        EndingBatcher batcher = new EndingBatcher(wire.wire(), "jobId", CLOCK, 1);

        assertEquals(EndingBatcher.Result.NOT_SENT, batcher.put(item("late"), NOW));
        assertEquals(EndingBatcher.Result.NOT_SENT, batcher.put(item("later"), NOW.minusSeconds(1)));
        assertEquals(EndingBatcher.Result.NOT_SENT, batcher.put(item("too-close"), NOW.plus(EndingBatcher.SHORTEST_CALL).minusMillis(1)),
                "a send-by too near to bound the call by is not batched either");
        assertEquals(EndingBatcher.Result.WRITTEN, batcher.put(item("in-time"), NOW.plus(EndingBatcher.SHORTEST_CALL)));
        assertEquals(List.of(List.of("in-time")), wire.sent(),
                "nothing goes without its condition once its writer's lease may be running out");
    }

    @Test
    void aBatchWithoutAnAnswerAndItemsLeftUnprocessedAreGivenBackToTheirWriters() {
        Wire down = wire(r -> {
            throw new io.poisonguard.ledger.StoreUnavailable(io.poisonguard.ledger.StoreUnavailable.LEDGER, true,
                    SdkClientException.create("Unable to execute HTTP request: Connection reset"));
        });
        assertEquals(EndingBatcher.Result.FAILED, new EndingBatcher(down.wire(), "jobId", CLOCK, 1).put(item("a"), NOW.plusSeconds(30)));

        Map<String, EndingBatcher.Result> results = new ConcurrentHashMap<>();
        CountDownLatch bothQueued = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        Wire partial = wire(r -> {
            if (first.getAndSet(false)) {
                try {
                    bothQueued.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return ALL_WRITTEN;
            }
            // Throttled: DynamoDB leaves the second item of the batch unprocessed.
            return List.of(r.get(1));
        });
        EndingBatcher batcher = new EndingBatcher(partial.wire(), "jobId", CLOCK, 1);
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            threads.submit(() -> results.put("opener", batcher.put(item("opener"), NOW.plusSeconds(30))));
            await().atMost(Duration.ofSeconds(10)).until(() -> partial.sent().size() == 1);
            threads.submit(() -> results.put("b", batcher.put(item("b"), NOW.plusSeconds(30))));
            await().atMost(Duration.ofSeconds(10)).until(() -> queuedBehind(batcher) == 1);
            threads.submit(() -> results.put("c", batcher.put(item("c"), NOW.plusSeconds(30))));
            await().atMost(Duration.ofSeconds(10)).until(() -> queuedBehind(batcher) == 2);
            bothQueued.countDown();
        }
        assertEquals(List.of("b", "c"), partial.sent().get(1));
        assertEquals(Map.of("opener", EndingBatcher.Result.WRITTEN, "b", EndingBatcher.Result.WRITTEN, "c", EndingBatcher.Result.FAILED), results);
    }

    @Test
    void aRefusedBatchStopsBatchingForAWhileSoEachEndingGoesStraightToItsOwnWrite() {
        Wire refused = wire(r -> {
            throw io.poisonguard.ledger.StoreUnavailable.refused(io.poisonguard.ledger.StoreUnavailable.LEDGER, "AccessDeniedException",
                    new IllegalStateException("not authorized to perform: dynamodb:BatchWriteItem"));
        });
        java.util.concurrent.atomic.AtomicLong millis = new java.util.concurrent.atomic.AtomicLong(NOW.toEpochMilli());
        Clock moving = io.poisonguard.testing.Clocks.reading(() -> Instant.ofEpochMilli(millis.get()));
        EndingBatcher batcher = new EndingBatcher(refused.wire(), "jobId", moving, 1);

        assertEquals(EndingBatcher.Result.FAILED, batcher.put(item("a"), NOW.plusSeconds(600)));
        assertEquals(EndingBatcher.Result.NOT_SENT, batcher.put(item("b"), NOW.plusSeconds(600)));
        assertEquals(1, refused.sent().size(), "no batch is tried while batching is paused");
        millis.addAndGet(EndingBatcher.REFUSED_PAUSE.toMillis());
        assertEquals(EndingBatcher.Result.FAILED, batcher.put(item("c"), NOW.plusSeconds(600)));
        assertEquals(2, refused.sent().size(), "batching is tried again after the pause");
    }

    /**
     * Two turns. W's item goes in a batch another writer (N) sent, while the other turn is free. Woken before that batch
     * returns (park may return at any time: here the test wakes it), W must park again, not take the free turn over and over
     * (on a virtual thread that loop would hold a carrier for the batch's whole round trip).
     */
    @Test
    void aWriterWhoseItemIsInAnotherWritersBatchWaitsForItsAnswerInsteadOfTakingTheFreeTurnAgainAndAgain() throws Exception {
        Map<String, CountDownLatch> holds = Map.of("o", new CountDownLatch(1), "b", new CountDownLatch(1), "n", new CountDownLatch(1));
        Wire wire = wire(items -> {
            String first = items.get(0).get("jobId").s();
            try {
                holds.get(first).await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return ALL_WRITTEN;
        });
        EndingBatcher batcher = new EndingBatcher(wire.wire(), "jobId", CLOCK, 2);
        Map<String, EndingBatcher.Result> results = new ConcurrentHashMap<>();
        java.util.function.Function<String, Thread> writer = id -> Thread.ofVirtual().start(() -> results.put(id, batcher.put(item(id), NOW.plusSeconds(30))));
        List<Thread> all = new ArrayList<>();
        all.add(writer.apply("o"));
        await().atMost(Duration.ofSeconds(10)).until(() -> wire.sent().size() == 1);
        all.add(writer.apply("b"));
        await().atMost(Duration.ofSeconds(10)).until(() -> wire.sent().size() == 2);
        // Both turns are taken: N, then W, queue.
        all.add(writer.apply("n"));
        await().atMost(Duration.ofSeconds(10)).until(() -> batcher.queued() == 1);
        Thread w = writer.apply("w");
        all.add(w);
        await().atMost(Duration.ofSeconds(10)).until(() -> batcher.queued() == 2);
        // O's batch returns: N, at the head, sends [n, w] and holds it on the wire; then B's returns, freeing a turn.
        holds.get("o").countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> wire.sent().size() == 3);
        assertEquals(List.of("n", "w"), wire.sent().get(2));
        holds.get("b").countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> results.containsKey("b"));
        long turnsBefore = batcher.turnsTaken();
        java.util.concurrent.locks.LockSupport.unpark(w);
        // Woken, W parks again (a spinning W stays RUNNABLE until N's batch returns, which the test holds back).
        await().atMost(Duration.ofSeconds(5)).until(() -> w.getState() == Thread.State.WAITING);
        long taken = batcher.turnsTaken() - turnsBefore;
        holds.get("n").countDown();
        for (Thread t : all) {
            t.join(Duration.ofSeconds(10));
        }
        assertEquals(0, taken, taken + " turns taken by a writer whose item was on the wire in another's batch");
        assertEquals(Map.of("o", EndingBatcher.Result.WRITTEN, "b", EndingBatcher.Result.WRITTEN, "n", EndingBatcher.Result.WRITTEN,
                "w", EndingBatcher.Result.WRITTEN), results);
    }

    /**
     * Many writers, two turns, a wire that answers at its own pace, and interrupts at random: every writer returns, every item
     * answered WRITTEN was sent exactly once, and none answered NOT_SENT was sent at all.
     */
    @Test
    void underInterruptsEveryWriterIsAnsweredAndNothingIsSentTwiceOrBehindItsWritersBack() throws Exception {
        java.util.Random random = new java.util.Random(7);
        Wire wire = wire(r -> {
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            return ALL_WRITTEN;
        });
        EndingBatcher batcher = new EndingBatcher(wire.wire(), "jobId", CLOCK, 2);
        Map<String, EndingBatcher.Result> results = new ConcurrentHashMap<>();
        List<Thread> writers = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            String id = "job-" + i;
            writers.add(Thread.ofVirtual().start(() -> results.put(id, batcher.put(item(id), NOW.plusSeconds(30)))));
            if (random.nextInt(4) == 0) {
                writers.get(random.nextInt(writers.size())).interrupt();
            }
        }
        for (Thread t : writers) {
            t.join(Duration.ofSeconds(20));
            assertTrue(!t.isAlive(), "a writer was left waiting");
        }
        Map<String, Long> sent = wire.sent().stream().flatMap(List::stream)
                .collect(java.util.stream.Collectors.groupingBy(id -> id, java.util.stream.Collectors.counting()));
        assertEquals(400, results.size());
        results.forEach((id, result) -> {
            switch (result) {
                case WRITTEN -> assertEquals(1L, sent.get(id), id + " answered WRITTEN");
                case NOT_SENT -> assertEquals(null, sent.get(id), id + " answered NOT_SENT");
                case FAILED -> assertTrue(sent.getOrDefault(id, 0L) <= 1, id + " answered FAILED");
            }
        });
    }

    private static int queuedBehind(EndingBatcher batcher) {
        return batcher.queued();
    }

    @Test
    void anErrorReachesTheWriterThatSentTheBatchAndEveryOtherWriterInItIsAnswered() throws Exception {
        CountDownLatch queued = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        Wire wire = wire(r -> {
            int call = calls.incrementAndGet();
            if (call == 1) {
                try {
                    queued.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            if (call == 2) {
                throw new OutOfMemoryError("Java heap space (a test's)");
            }
            return ALL_WRITTEN;
        });
        EndingBatcher batcher = new EndingBatcher(wire.wire(), "jobId", CLOCK, 1);
        Map<String, Object> outcomes = new ConcurrentHashMap<>();
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            threads.submit(() -> batcher.put(item("opener"), NOW.plusSeconds(30)));
            await().atMost(Duration.ofSeconds(10)).until(() -> wire.sent().size() == 1);
            for (String id : List.of("x", "y")) {
                threads.submit(() -> {
                    try {
                        outcomes.put(id, batcher.put(item(id), NOW.plusSeconds(30)));
                    } catch (Error e) {
                        outcomes.put(id, e);
                    }
                });
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> queuedBehind(batcher) == 2);
            queued.countDown();
        }
        assertEquals(2, outcomes.size(), "both writers of the failed batch were answered: " + outcomes);
        long errors = outcomes.values().stream().filter(OutOfMemoryError.class::isInstance).count();
        assertEquals(1, errors, "the writer that sent it meets the Error as itself: " + outcomes);
        assertTrue(outcomes.containsValue(EndingBatcher.Result.FAILED), "the other is told its item may not have been written: " + outcomes);
        // The batcher goes on after it.
        assertEquals(EndingBatcher.Result.WRITTEN, batcher.put(item("after"), NOW.plusSeconds(30)));
    }

    @Test
    void aWriterInterruptedWhileItsItemQueuesWithdrawsItAndKeepsItsInterrupt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        Wire wire = wire(r -> {
            if (first.getAndSet(false)) {
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return ALL_WRITTEN;
        });
        EndingBatcher batcher = new EndingBatcher(wire.wire(), "jobId", CLOCK, 1);
        Map<String, Object> outcome = new ConcurrentHashMap<>();
        try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            threads.submit(() -> batcher.put(item("opener"), NOW.plusSeconds(30)));
            await().atMost(Duration.ofSeconds(10)).until(() -> wire.sent().size() == 1);
            Thread writer = Thread.ofVirtual().start(() -> {
                outcome.put("result", batcher.put(item("withdrawn"), NOW.plusSeconds(30)));
                outcome.put("interrupted", Thread.currentThread().isInterrupted());
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> queuedBehind(batcher) == 1);
            writer.interrupt();
            writer.join(10_000);
            release.countDown();
        }
        assertEquals(Map.of("result", EndingBatcher.Result.NOT_SENT, "interrupted", true), outcome);
        assertEquals(List.of(List.of("opener")), wire.sent(),
                "the withdrawn item was never sent");
    }
}

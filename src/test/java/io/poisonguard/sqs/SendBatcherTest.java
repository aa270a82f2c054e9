package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Notices of jobs finishing together share a SendMessageBatch, on the real SQS protocol (the emulator): every
 * sender returns only once its own message was accepted, a message SQS refuses fails its sender alone, and a
 * lone sender is not held back waiting for company.
 */
class SendBatcherTest {
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private SqsClient sqs;
    private String url;
    private SendBatcher batcher;

    @BeforeEach
    void queue() {
        Emulators e = Emulators.shared();
        sqs = EmulatorClients.sqs(e, new ExecutionInterceptor() {
                    @Override
                    public void beforeTransmission(Context.BeforeTransmission c, ExecutionAttributes a) {
                        requests.computeIfAbsent(a.getAttribute(SdkExecutionAttribute.OPERATION_NAME), k -> new AtomicInteger()).incrementAndGet();
                    }
                });
        Names names = new Names("batch" + UUID.randomUUID().toString().substring(0, 6));
        new QueueBootstrap(sqs, names).ensureQueues(Duration.ofDays(4), Duration.ofSeconds(30), 100);
        url = sqs.getQueueUrl(b -> b.queueName(names.noticesQueue())).queueUrl();
        batcher = new SendBatcher(sqs, () -> url, 2, Duration.ofMillis(5), "test-sender");
        requests.clear();
    }

    @AfterEach
    void close() {
        batcher.close();
        sqs.close();
    }

    @Test
    void sendersFinishingTogetherShareBatchesAndEachReturnsOnlyOnceItsMessageIsAccepted() throws Exception {
        int n = 60;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> senders = new ArrayList<>();
        Set<String> returned = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < n; i++) {
            String body = "notice-" + i;
            senders.add(Thread.ofVirtual().start(() -> {
                try {
                    start.await();
                    batcher.send(SendMessageBatchRequestEntry.builder().messageBody(body));
                    returned.add(body);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        start.countDown();
        for (Thread t : senders) {
            t.join(Duration.ofSeconds(30));
        }
        assertEquals(n, returned.size(), "every sender returned");
        assertEquals(n, drain().size(), "every message is on the queue, once");
        int batches = requests.getOrDefault("SendMessageBatch", new AtomicInteger()).get();
        assertTrue(batches <= n / 3, n + " messages took " + batches + " SendMessageBatch requests");
        assertEquals(0, requests.getOrDefault("SendMessage", new AtomicInteger()).get());
    }

    @Test
    void aMessageSqsRefusesFailsItsOwnSenderAndNotTheOthersInItsBatch() throws Exception {
        // U+0000 is outside the characters SQS allows in a body: refused per entry (InvalidMessageContents).
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> senders = new ArrayList<>();
        Map<String, String> outcome = new ConcurrentHashMap<>();
        for (int i = 0; i < 9; i++) {
            String body = i == 4 ? "bad\u0000body" : "good-" + i;
            senders.add(Thread.ofVirtual().start(() -> {
                try {
                    start.await();
                    batcher.send(SendMessageBatchRequestEntry.builder().messageBody(body));
                    outcome.put(body, "accepted");
                } catch (SqsException refused) {
                    outcome.put(body, "refused");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        start.countDown();
        for (Thread t : senders) {
            t.join(Duration.ofSeconds(30));
        }
        assertEquals("refused", outcome.get("bad\u0000body"));
        assertEquals(8, outcome.values().stream().filter("accepted"::equals).count(), outcome.toString());
        Set<String> bodies = new HashSet<>(drain());
        assertEquals(8, bodies.size());
        assertTrue(bodies.stream().allMatch(b -> b.startsWith("good-")), bodies.toString());
    }

    @Test
    void aLoneSenderIsAnsweredWithoutWaitingForABatchToFill() throws Exception {
        long t0 = System.nanoTime();
        batcher.send(SendMessageBatchRequestEntry.builder().messageBody("alone"));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertEquals(List.of("alone"), drain());
        assertTrue(took.compareTo(Duration.ofSeconds(2)) < 0, "took " + took);
    }

    @Test
    void afterCloseASendStillGoesOutAndIsAnswered() throws Exception {
        batcher.close();
        batcher.send(SendMessageBatchRequestEntry.builder().messageBody("late"));
        assertEquals(List.of("late"), drain());
        SqsException refused = assertThrows(SqsException.class, () -> batcher.send(SendMessageBatchRequestEntry.builder().messageBody("x\u0000")));
        assertTrue(refused.getMessage().contains("Invalid"), refused.getMessage());
    }

    @Test
    void aSenderInterruptedBeforeItsMessageWasTakenWithdrawsItAndNothingIsSent() throws Exception {
        // One batch on the wire at a time, and SQS made to hold that one: A goes out and waits for its answer, B is
        // taken into the next batch (which waits for the wire), C stays queued.
        CountDownLatch onTheWire = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        try (SqsClient slow = held(onTheWire, answer, r -> { })) {
            SendBatcher one = new SendBatcher(slow, () -> url, 1, Duration.ZERO, "test-slow");
            Map<String, String> outcome = new ConcurrentHashMap<>();
            Thread a = sender(one, "A", outcome);
            onTheWire.await();
            Thread b = sender(one, "B", outcome);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> one.waiting() == 0);
            Thread c = sender(one, "C", outcome);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> one.waiting() == 1);
            c.interrupt();
            c.join(Duration.ofSeconds(10));
            assertEquals("interrupted", outcome.get("C"));
            assertEquals(0, one.waiting(), "C withdrew its message");
            answer.countDown();
            a.join(Duration.ofSeconds(10));
            b.join(Duration.ofSeconds(10));
            one.close();
            assertEquals("accepted", outcome.get("A"));
            assertEquals("accepted", outcome.get("B"));
            assertEquals(List.of("A", "B"), drain().stream().sorted().toList(), "C was never sent");
        }
    }

    @Test
    void messagesQueuedWhileEverySenderIsOnTheWireGoTogetherInTheNextBatch() throws Exception {
        try (Held held = new Held()) {
            // One sender, no linger: only entries that queued while the sender was busy can share a batch.
            SendBatcher one = new SendBatcher(held.client, () -> url, 1, Duration.ZERO, "test-queued");
            Map<String, String> outcome = xThenAAndBQueuedBehindIt(one, held.firstOnTheWire, held.answer);
            one.close();
            assertEquals(List.of(1, 2), held.batchSizes, "X alone, then A and B together (not A alone, then B)");
            assertEquals(Map.of("X", "accepted", "A", "accepted", "B", "accepted"), outcome);
        }
    }

    @Test
    void whileABatchIsOnTheWireTheNextGoesBesideItOnlyOnceItIsFull() throws Exception {
        try (Held held = new Held()) {
            // Four senders and no linger: before, each of the 14 could have left in a batch of its own beside X.
            SendBatcher four = new SendBatcher(held.client, () -> url, 4, Duration.ZERO, "test-full");
            Map<String, String> outcome = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            threads.add(sender(four, "X", outcome));
            held.firstOnTheWire.await();
            for (int i = 1; i <= 14; i++) {
                threads.add(sender(four, "A" + i, outcome));
            }
            // Ten of them fill a batch, which goes on the wire beside X; the other four wait behind both.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> held.batchSizes.size() >= 2);
            assertEquals(List.of(1, 10), held.batchSizes.subList(0, 2), "X alone, then a full batch beside it");
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> four.waiting() == 3);
            assertEquals(2, held.batchSizes.size(), "the last four wait for a batch to return: " + held.batchSizes);
            held.answer.countDown();
            for (Thread t : threads) {
                t.join(Duration.ofSeconds(10));
            }
            four.close();
            assertEquals(List.of(1, 10, 4), held.batchSizes);
            assertEquals(15, outcome.size());
            assertTrue(outcome.values().stream().allMatch("accepted"::equals), outcome.toString());
        }
    }

    @Test
    void aBatchWaitsForCompanyAtMostHalfARecentRoundTrip() throws Exception {
        try (Held held = new Held()) {
            // A linger far longer than any round trip here.
            SendBatcher one = new SendBatcher(held.client, () -> url, 1, Duration.ofSeconds(30), "test-linger");
            xThenAAndBQueuedBehindIt(one, held.firstOnTheWire, held.answer);
            // The last batch carried two, so the next one waits for company: half a recent round trip, not 30 s.
            long t0 = System.nanoTime();
            one.send(SendMessageBatchRequestEntry.builder().messageBody("C"));
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            one.close();
            assertTrue(took.compareTo(Duration.ofSeconds(10)) < 0, "C waited " + took + " for company");
            assertEquals(List.of(1, 2, 1), held.batchSizes);
        }
    }

    @Test
    void theLingerIsTheConfiguredOneOrHalfARoundTripWhicheverIsShorter() {
        long ms = 1_000_000;
        assertEquals(0, SendBatcher.linger(5 * ms, 0), "no round trip seen yet: no wait");
        assertEquals(2 * ms, SendBatcher.linger(5 * ms, 4 * ms));
        assertEquals(5 * ms, SendBatcher.linger(5 * ms, 40 * ms));
        assertEquals(0, SendBatcher.linger(0, 40 * ms));
    }

    /**
     * A client whose every request is shown to {@code seen}, counts {@code onTheWire} down, and is held until
     * {@code answer} opens: SQS made to take its time with a batch.
     */
    private static SqsClient held(CountDownLatch onTheWire, CountDownLatch answer,
                                  java.util.function.Consumer<software.amazon.awssdk.core.SdkRequest> seen) {
        return EmulatorClients.sqs(Emulators.shared(), new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission c, ExecutionAttributes a) {
                seen.accept(c.request());
                onTheWire.countDown();
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    /**
     * A client held like {@link #held} until {@code answer} opens, recording the size of every SendMessageBatch it
     * sends; {@code firstOnTheWire} opens when its first request is on the wire.
     */
    private static final class Held implements AutoCloseable {
        final CountDownLatch firstOnTheWire = new CountDownLatch(1);
        final CountDownLatch answer = new CountDownLatch(1);
        final List<Integer> batchSizes = new java.util.concurrent.CopyOnWriteArrayList<>();
        final SqsClient client = held(firstOnTheWire, answer, batchSizes);

        @Override
        public void close() {
            client.close();
        }
    }

    /** A client held like {@link #held}, recording the size of every SendMessageBatch it sends. */
    private static SqsClient held(CountDownLatch onTheWire, CountDownLatch answer, List<Integer> batchSizes) {
        return held(onTheWire, answer, r -> {
            if (r instanceof software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest batch) {
                batchSizes.add(batch.entries().size());
            }
        });
    }

    /**
     * On a one-sender batcher whose client is held: X goes on the wire; while it is held, A is taken to lead the next
     * batch (waiting for the sender) and B queues behind it; then SQS answers. Returns once all three are answered.
     */
    private static Map<String, String> xThenAAndBQueuedBehindIt(SendBatcher one, CountDownLatch firstOnTheWire, CountDownLatch answer)
            throws InterruptedException {
        Map<String, String> outcome = new ConcurrentHashMap<>();
        Thread x = sender(one, "X", outcome);
        firstOnTheWire.await();
        Thread a = sender(one, "A", outcome);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> one.waiting() == 0);
        Thread b = sender(one, "B", outcome);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> one.waiting() == 1);
        answer.countDown();
        for (Thread t : List.of(x, a, b)) {
            t.join(Duration.ofSeconds(10));
        }
        return outcome;
    }

    private static Thread sender(SendBatcher b, String body, Map<String, String> outcome) {
        return Thread.ofVirtual().start(() -> {
            try {
                b.send(SendMessageBatchRequestEntry.builder().messageBody(body));
                outcome.put(body, "accepted");
            } catch (InterruptedException e) {
                outcome.put(body, "interrupted");
            } catch (RuntimeException e) {
                outcome.put(body, "failed: " + e.getMessage());
            }
        });
    }

    private List<String> drain() {
        List<String> out = new ArrayList<>();
        while (true) {
            List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(0)).messages();
            if (got.isEmpty()) {
                return out;
            }
            got.forEach(m -> out.add(m.body()));
        }
    }
}

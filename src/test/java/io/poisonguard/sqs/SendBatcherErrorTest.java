package io.poisonguard.sqs;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A SendMessageBatch that ends with an Error (an OutOfMemoryError while the SDK reads the answer) left its senders waiting
 * for ever: only a RuntimeException answered them. Every job whose notice was in that batch then held its slot after its
 * handler returned, and its lease lapsed into a crash charged to it. And a sender interrupted while its message was on the
 * wire (the attempt's deadline cut its deferred notice) was told it failed at once, though SQS then took the message: the
 * notice went out unrecorded, and the next attempt sent it again.
 */
class SendBatcherErrorTest {
    /**
     * Answers every batch as accepted, except the first {@code errors}, which end with an OutOfMemoryError; while
     * {@code answer} is set, each batch waits for it on the wire.
     */
    private static final class Sqs implements SqsClient {
        final AtomicInteger errors = new AtomicInteger();
        final CountDownLatch onTheWire = new CountDownLatch(1);
        volatile CountDownLatch answer;

        @Override
        public SendMessageBatchResponse sendMessageBatch(SendMessageBatchRequest request) {
            onTheWire.countDown();
            CountDownLatch waitFor = answer;
            if (waitFor != null) {
                try {
                    waitFor.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            if (errors.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new OutOfMemoryError("Java heap space (scripted)");
            }
            return SendMessageBatchResponse.builder().successful(request.entries().stream()
                    .map(e -> SendMessageBatchResultEntry.builder().id(e.id()).messageId("m-" + e.id()).build()).toList()).build();
        }

        @Override
        public String serviceName() {
            return "sqs";
        }

        @Override
        public void close() {
        }
    }

    private static SendBatcher batcher(Sqs sqs) {
        return new SendBatcher(sqs, () -> "http://sqs.local/000000000000/notices", 2, Duration.ofMillis(5), "test-sender");
    }

    /** A sender on a thread of its own: what its send threw (null once accepted), and whether it was interrupted after. */
    private record Sender(Thread thread, CompletableFuture<Throwable> thrown, CompletableFuture<Boolean> interruptedAfter) {
        static Sender start(SendBatcher batcher, String body) {
            CompletableFuture<Throwable> thrown = new CompletableFuture<>();
            CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
            Thread t = Thread.ofVirtual().start(() -> {
                try {
                    batcher.send(SendMessageBatchRequestEntry.builder().messageBody(body));
                    interrupted.complete(Thread.currentThread().isInterrupted());
                    thrown.complete(null);
                } catch (Throwable e) {
                    interrupted.complete(Thread.currentThread().isInterrupted());
                    thrown.complete(e);
                }
            });
            return new Sender(t, thrown, interrupted);
        }
    }

    @Test
    void aBatchThatEndsWithAnErrorFailsItsSendersAndTheNextBatchGoesOut() throws Exception {
        Sqs sqs = new Sqs();
        sqs.errors.set(1);
        try (SendBatcher batcher = batcher(sqs)) {
            Sender first = Sender.start(batcher, "first");
            await().atMost(Duration.ofSeconds(5)).until(first.thrown()::isDone);
            assertTrue(first.thrown().get() instanceof OutOfMemoryError, "the sender of the batch that ended with an error meets that"
                    + " error itself (a crash of its job, not a failure to classify): " + first.thrown().get());
            Sender next = Sender.start(batcher, "next");
            await().atMost(Duration.ofSeconds(5)).until(next.thrown()::isDone);
            assertNull(next.thrown().get(), "the next batch is sent and accepted");
        }
    }

    /** Interrupted while its message is on the wire, the sender waits for the answer, learns the message went, and keeps its interrupt. */
    @Test
    void aSenderInterruptedWhileItsMessageIsOnTheWireLearnsTheAnswerAndKeepsItsInterrupt() throws Exception {
        Sqs sqs = new Sqs();
        sqs.answer = new CountDownLatch(1);
        try (SendBatcher batcher = batcher(sqs)) {
            Sender sender = Sender.start(batcher, "notice");
            await().atMost(Duration.ofSeconds(5)).until(() -> sqs.onTheWire.getCount() == 0);
            sender.thread().interrupt();
            sqs.answer.countDown();
            await().atMost(Duration.ofSeconds(5)).until(sender.thrown()::isDone);
            assertNull(sender.thrown().get(), "the message went");
            assertEquals(true, sender.interruptedAfter().get(), "its interrupt is kept");
        }
    }

    /** An answer that does not come: the interrupted sender gives up after its short wait, saying the fate is unknown. */
    @Test
    void aSenderInterruptedWhileItsMessageIsOnTheWireGivesUpWhenNoAnswerComes() throws Exception {
        Sqs sqs = new Sqs();
        sqs.answer = new CountDownLatch(1);
        SendBatcher batcher = batcher(sqs);
        try {
            Sender sender = Sender.start(batcher, "notice");
            await().atMost(Duration.ofSeconds(5)).until(() -> sqs.onTheWire.getCount() == 0);
            sender.thread().interrupt();
            await().atMost(SendBatcher.INTERRUPTED_WAIT.plusSeconds(3)).until(sender.thrown()::isDone);
            assertTrue(sender.thrown().get() instanceof InterruptedException, String.valueOf(sender.thrown().get()));
        } finally {
            sqs.answer.countDown();
            batcher.close();
        }
    }
}

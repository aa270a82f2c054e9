package io.poisonguard.sqs;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A SendMessageBatch that ends with an Error (an OutOfMemoryError while the SDK reads the answer) left its senders waiting
 * for ever: only a RuntimeException answered them. Every job whose notice was in that batch then held its slot after its
 * handler returned, and its lease lapsed into a crash charged to it.
 */
class SendBatcherErrorTest {
    /** Answers every batch as accepted, except the first {@code errors}, which end with an OutOfMemoryError. */
    private static final class Sqs implements SqsClient {
        final AtomicInteger errors = new AtomicInteger();

        @Override
        public SendMessageBatchResponse sendMessageBatch(SendMessageBatchRequest request) {
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

    /** Sends one message on a thread of its own; completes with what the send threw, or null once accepted. */
    private static CompletableFuture<Throwable> send(SendBatcher batcher, String body) {
        CompletableFuture<Throwable> out = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                batcher.send(SendMessageBatchRequestEntry.builder().messageBody(body));
                out.complete(null);
            } catch (Throwable t) {
                out.complete(t);
            }
        });
        return out;
    }

    @Test
    void aBatchThatEndsWithAnErrorFailsItsSendersAndTheNextBatchGoesOut() throws Exception {
        Sqs sqs = new Sqs();
        sqs.errors.set(1);
        try (SendBatcher batcher = new SendBatcher(sqs, () -> "http://sqs.local/000000000000/notices", 2, Duration.ofMillis(5), "test-sender")) {
            CompletableFuture<Throwable> first = send(batcher, "first");
            await().atMost(Duration.ofSeconds(5)).until(first::isDone);
            assertTrue(first.get() instanceof OutOfMemoryError, "the sender of the batch that ended with an error meets that error"
                    + " itself (a crash of its job, not a failure to classify): " + first.get());
            CompletableFuture<Throwable> next = send(batcher, "next");
            await().atMost(Duration.ofSeconds(5)).until(next::isDone);
            assertNull(next.get(), "the next batch is sent and accepted");
        }
    }

    /**
     * A sender interrupted while its message was on the wire (the attempt's deadline cut its deferred notice) was told it
     * failed at once, though SQS then took the message: the notice went out unrecorded, and the next attempt sent it again.
     * It now waits for the batch's answer and learns the message went; its interrupt is kept.
     */
    @Test
    void aSenderInterruptedWhileItsMessageIsOnTheWireLearnsTheAnswerAndKeepsItsInterrupt() throws Exception {
        java.util.concurrent.CountDownLatch onTheWire = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        Sqs accepting = new Sqs();
        SqsClient slow = new SqsClient() {
            @Override
            public SendMessageBatchResponse sendMessageBatch(SendMessageBatchRequest request) {
                onTheWire.countDown();
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return accepting.sendMessageBatch(request);
            }

            @Override
            public String serviceName() {
                return "sqs";
            }

            @Override
            public void close() {
            }
        };
        try (SendBatcher batcher = new SendBatcher(slow, () -> "http://sqs.local/000000000000/notices", 2, Duration.ofMillis(5), "test-sender")) {
            CompletableFuture<String> sender = new CompletableFuture<>();
            Thread t = Thread.ofVirtual().start(() -> {
                try {
                    batcher.send(SendMessageBatchRequestEntry.builder().messageBody("notice"));
                    sender.complete("sent, interrupted=" + Thread.currentThread().isInterrupted());
                } catch (Throwable e) {
                    sender.complete("threw " + e);
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> onTheWire.getCount() == 0);
            t.interrupt();
            answer.countDown();
            await().atMost(Duration.ofSeconds(5)).until(sender::isDone);
            org.junit.jupiter.api.Assertions.assertEquals("sent, interrupted=true", sender.get());
        }
    }

    /** An answer that does not come: the interrupted sender gives up after its short wait, saying the fate is unknown. */
    @Test
    void aSenderInterruptedWhileItsMessageIsOnTheWireGivesUpWhenNoAnswerComes() throws Exception {
        java.util.concurrent.CountDownLatch onTheWire = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch answer = new java.util.concurrent.CountDownLatch(1);
        Sqs accepting = new Sqs();
        SqsClient stuck = new SqsClient() {
            @Override
            public SendMessageBatchResponse sendMessageBatch(SendMessageBatchRequest request) {
                onTheWire.countDown();
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return accepting.sendMessageBatch(request);
            }

            @Override
            public String serviceName() {
                return "sqs";
            }

            @Override
            public void close() {
            }
        };
        SendBatcher batcher = new SendBatcher(stuck, () -> "http://sqs.local/000000000000/notices", 2, Duration.ofMillis(5), "test-sender");
        try {
            CompletableFuture<Throwable> sender = new CompletableFuture<>();
            Thread t = Thread.ofVirtual().start(() -> {
                try {
                    batcher.send(SendMessageBatchRequestEntry.builder().messageBody("notice"));
                    sender.complete(null);
                } catch (Throwable e) {
                    sender.complete(e);
                }
            });
            await().atMost(Duration.ofSeconds(5)).until(() -> onTheWire.getCount() == 0);
            t.interrupt();
            await().atMost(SendBatcher.INTERRUPTED_WAIT.plusSeconds(3)).until(sender::isDone);
            assertTrue(sender.get() instanceof InterruptedException, String.valueOf(sender.get()));
        } finally {
            answer.countDown();
            batcher.close();
        }
    }
}

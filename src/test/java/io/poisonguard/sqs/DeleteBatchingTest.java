package io.poisonguard.sqs;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Names;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlResponse;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The job queue's deletes: batched by ten, none lost, a lone one not held back for long. */
class DeleteBatchingTest {
    /** Records every DeleteMessageBatch it is sent. */
    private static final class RecordingSqs implements SqsClient {
        final List<List<String>> batches = new CopyOnWriteArrayList<>();
        /** Calls left that end with an OutOfMemoryError instead (as the SDK's parsing of an answer may). */
        final java.util.concurrent.atomic.AtomicInteger errors = new java.util.concurrent.atomic.AtomicInteger();

        @Override
        public GetQueueUrlResponse getQueueUrl(GetQueueUrlRequest request) {
            return GetQueueUrlResponse.builder().queueUrl("http://sqs.local/000000000000/" + request.queueName()).build();
        }

        @Override
        public DeleteMessageBatchResponse deleteMessageBatch(DeleteMessageBatchRequest request) {
            if (errors.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new OutOfMemoryError("Java heap space (scripted)");
            }
            batches.add(request.entries().stream().map(DeleteMessageBatchRequestEntry::receiptHandle).toList());
            return DeleteMessageBatchResponse.builder().successful(List.of()).failed(List.of()).build();
        }

        int sent() {
            return batches.stream().mapToInt(List::size).sum();
        }

        @Override
        public String serviceName() {
            return "sqs";
        }

        @Override
        public void close() {
        }
    }

    private static InboundMessage message(int i) {
        return new InboundMessage("m" + i, "rh-" + i, "{}", Map.of(), Instant.EPOCH, 1, Instant.EPOCH);
    }

    private static SqsJobQueue queue(RecordingSqs sqs) {
        return new SqsJobQueue(sqs, new QueueUrls(sqs, new Names("db")), Clock.systemUTC());
    }

    /**
     * The flusher thread caught only interrupts: one OutOfMemoryError while sending ended it for the life of the process,
     * and from then on every delete piled up in memory while every completed copy came back after its visibility timeout.
     */
    @Test
    void anErrorWhileSendingABatchDoesNotEndTheFlusherAndItsDeletesAreSentAgain() {
        RecordingSqs sqs = new RecordingSqs();
        sqs.errors.set(1);
        SqsJobQueue q = queue(sqs);
        try {
            for (int i = 0; i < 5; i++) {
                q.delete(message(i));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> sqs.errors.get() == 0);
            for (int i = 5; i < 25; i++) {
                q.delete(message(i));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> sqs.sent() == 25);
            assertEquals(25, sqs.batches.stream().flatMap(List::stream).distinct().count(), "each delete sent once: " + sqs.batches);
        } finally {
            q.flush();
        }
    }

    @Test
    void deletesThatPiledUpGoOutInFullBatchesAndNoneIsLost() {
        RecordingSqs sqs = new RecordingSqs();
        SqsJobQueue q = queue(sqs);
        try {
            for (int i = 0; i < 25; i++) {
                q.delete(message(i));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> sqs.sent() == 25);
            assertTrue(sqs.batches.stream().allMatch(b -> b.size() <= 10), "at most ten per batch: " + sqs.batches);
            assertEquals(3, sqs.batches.size(), "25 deletes queued at once make three batches: " + sqs.batches);
            assertEquals(25, sqs.batches.stream().flatMap(List::stream).distinct().count(), "each delete sent once");
        } finally {
            q.flush();
        }
    }

    @Test
    void aLoneDeleteGoesOutAfterTheLingerWithoutWaitingForCompany() {
        RecordingSqs sqs = new RecordingSqs();
        SqsJobQueue q = queue(sqs);
        try {
            q.delete(message(1));
            await().atMost(Duration.ofSeconds(2)).until(() -> sqs.sent() == 1);
            assertEquals(List.of(List.of("rh-1")), sqs.batches);
        } finally {
            q.flush();
        }
    }

    @Test
    void aTrickleOfDeletesIsBatchedAndFlushSendsTheRest() throws Exception {
        RecordingSqs sqs = new RecordingSqs();
        SqsJobQueue q = queue(sqs);
        for (int i = 0; i < 40; i++) {
            q.delete(message(i));
            Thread.sleep(2); // a job ending every two milliseconds, as under a backlog
        }
        q.flush();
        assertEquals(40, sqs.sent(), "every delete sent by the time flush returns: " + sqs.batches);
        assertTrue(sqs.batches.size() <= 8, "batched, not one by one: " + sqs.batches.size() + " batches");
    }

    @Test
    void aDeleteQueuedWhileFlushDrainsIsStillSent() throws Exception {
        // A job ends as the worker stops: its delete found the queue open, and was preempted before it queued the
        // receipt, until flush() had stopped the flusher and drained what was queued.
        RecordingSqs sqs = new RecordingSqs();
        CountDownLatch queueing = new CountDownLatch(1);
        CountDownLatch mayQueue = new CountDownLatch(1);
        LinkedBlockingQueue<String> pending = new LinkedBlockingQueue<>() {
            @Override
            public boolean add(String receipt) {
                if (receipt.equals("rh-late")) {
                    queueing.countDown();
                    try {
                        mayQueue.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return super.add(receipt);
            }
        };
        SqsJobQueue q = new SqsJobQueue(sqs, new QueueUrls(sqs, new Names("db")), Clock.systemUTC(), pending);
        Thread ending = Thread.ofVirtual().start(() -> q.delete(new InboundMessage("late", "rh-late", "{}", Map.of(), Instant.EPOCH, 1,
                Instant.EPOCH)));
        queueing.await();
        q.flush();
        mayQueue.countDown();
        ending.join(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(2)).until(() -> sqs.sent() == 1);
        assertEquals(List.of(List.of("rh-late")), sqs.batches);
    }
}

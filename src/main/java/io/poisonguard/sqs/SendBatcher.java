package io.poisonguard.sqs;

import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Sends messages to one queue up to ten at a time without making a lone sender wait for a batch to fill:
 * a sender queues its message and waits for SQS's answer to it; a collecting thread forms a batch (up to
 * SendMessageBatch's ten entries and its size limit) and sends it at once when no other batch is on the wire.
 * While one is, the next batch gathers behind it and goes when it returns, or sooner, beside it, once it is
 * full (at most {@code senders} batches at once): under load batches leave full, and a trickle is not
 * delayed. While senders are finishing together a batch also waits a few milliseconds for more; an idle queue
 * adds no delay. That wait is at most half of what a SendMessageBatch round trip takes lately: when SQS answers
 * fast, a sender's time in a batch is short and waiting would dominate it; when SQS is slow (loaded), each
 * request saved is worth more.
 * <p>
 * {@link #send} returns only once SQS accepted that very entry, and throws otherwise, so a caller that records
 * the send as done (an effect) records only what was accepted. A sender interrupted before its entry was
 * taken withdraws it: it is known not to have been sent. One interrupted after that does not know, as with
 * a single SendMessage whose answer never came.
 */
final class SendBatcher implements AutoCloseable {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(SendBatcher.class);
    /** SendMessageBatch's limits: ten entries, and the sum of the messages' sizes. */
    static final int MAX_ENTRIES = 10;
    static final int MAX_BATCH_BYTES = 256 * 1024;

    private final SqsClient sqs;
    private final Supplier<String> queueUrl;
    private final LinkedBlockingQueue<Pending> queued = new LinkedBlockingQueue<>();
    private final Semaphore inFlight;
    private final int senders;
    private final String name;
    private final long lingerNanos;
    private final Thread collector;
    private final AtomicInteger ids = new AtomicInteger();
    /** A moving average of SendMessageBatch round trips (ns); 0 until the first answer. */
    private final java.util.concurrent.atomic.AtomicLong roundTrip = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean open = true;
    /** Signalled when a batch leaves the wire or a full batch has queued: the collector's turn may have come. */
    private final java.util.concurrent.locks.ReentrantLock turns = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.locks.Condition turn = turns.newCondition();
    private volatile boolean awaitingTurn;

    /**
     * @param senders batches that may be on the wire at once
     * @param linger  how long a batch waits for company while senders are finishing together (never for a lone sender)
     */
    SendBatcher(SqsClient sqs, Supplier<String> queueUrl, int senders, java.time.Duration linger, String name) {
        this.sqs = sqs;
        this.lingerNanos = linger.toNanos();
        this.queueUrl = queueUrl;
        this.senders = senders;
        this.inFlight = new Semaphore(senders);
        this.name = name;
        // A platform thread: the collector waits with a timeout for nearly every batch (for the first entry, and
        // while it lingers for company), and on a virtual thread each such wait arms and cancels a timer on the JDK's
        // delay scheduler. One long-lived thread per batcher; the batches themselves are sent on virtual threads.
        this.collector = Thread.ofPlatform().daemon().name(name).start(this::collectLoop);
    }

    /** One message waiting to be sent, and who waits for it. */
    private static final class Pending {
        final SendMessageBatchRequestEntry entry;
        final int bytes;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        /** 0 queued, 1 taken into a batch being formed, 2 withdrawn by its sender, 3 on the wire (its batch is being sent). */
        final AtomicInteger state = new AtomicInteger();

        Pending(SendMessageBatchRequestEntry entry) {
            this.entry = entry;
            this.bytes = size(entry);
        }
    }

    /**
     * Sends one message ({@code entry} without an id: one is given here) and returns once SQS has accepted it.
     *
     * @throws SqsException          SQS refused this entry or the whole batch
     * @throws InterruptedException  the sender was interrupted before its entry went on the wire (it was withdrawn),
     *                               or while it was on the wire and no answer came within {@link #INTERRUPTED_WAIT};
     *                               one answered within it returns (or throws) as the answer says, its interrupt set
     *                               again
     */
    void send(SendMessageBatchRequestEntry.Builder entry) throws InterruptedException {
        Pending p = new Pending(entry.id("m" + Integer.toUnsignedString(ids.getAndIncrement())).build());
        if (open) {
            queued.add(p);
            if (awaitingTurn && queued.size() + 1 >= MAX_ENTRIES) {
                // A full batch is ready behind a leader waiting for its turn.
                turns.lock();
                try {
                    turn.signal();
                } finally {
                    turns.unlock();
                }
            }
            if (!open && p.state.compareAndSet(0, 1)) {
                // Closed meanwhile, perhaps after the sending threads' last look at the queue.
                queued.remove(p);
                sendBatch(List.of(p));
            }
        } else if (p.state.compareAndSet(0, 1)) {
            // Closing: no sending thread takes it any more; sent alone, here.
            sendBatch(List.of(p));
        }
        try {
            p.done.get();
        } catch (InterruptedException interrupted) {
            if (p.state.compareAndSet(0, 2) || p.state.compareAndSet(1, 2)) {
                // Not on the wire yet: withdrawn (a batch being formed leaves it out).
                queued.remove(p);
                throw interrupted;
            }
            // On the wire: its answer is waited for a moment, so a message that went is known to have gone (the caller then
            // records it, not sends it again); the interrupt is kept for the caller. One not answered by then is given up.
            try {
                p.done.get(INTERRUPTED_WAIT.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException | java.util.concurrent.TimeoutException stillUnknown) {
                InterruptedException fate = new InterruptedException("interrupted while its message was on the wire; its fate is unknown");
                fate.initCause(stillUnknown);
                throw fate;
            } catch (ExecutionException failed) {
                throw rethrown(failed.getCause());
            } finally {
                Thread.currentThread().interrupt();
            }
        } catch (ExecutionException failed) {
            throw rethrown(failed.getCause());
        }
    }

    /**
     * How long a sender interrupted while its message is on the wire waits for the answer: within the 5 s a shutdown gives the
     * attempts it abandons, and the lease an attempt cut at its deadline still holds.
     */
    static final java.time.Duration INTERRUPTED_WAIT = java.time.Duration.ofSeconds(3);

    /** A send's failure as its sender meets it: SQS's error as is, and an Error (one the JVM may not survive) as is too. */
    private static RuntimeException rethrown(Throwable cause) {
        if (cause instanceof RuntimeException r) {
            return r;
        }
        if (cause instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(cause);
    }

    /** Entries waiting to be taken into a batch. */
    int waiting() {
        return queued.size();
    }

    /**
     * Forms batches: takes the first queued entry, waits for its turn on the wire ({@link #awaitTurn}), then
     * takes whatever else is queued, up to the limits. While the last batch carried more than one entry
     * (senders are finishing together), it lingers a few milliseconds for more; a lone entry goes at once. Each
     * batch is sent on a thread of its own.
     */
    private void collectLoop() {
        // An entry taken that did not fit the last batch: it leads the next one.
        Pending carried = null;
        boolean busy = false;
        while (open || carried != null || !queued.isEmpty()) {
            List<Pending> batch = new ArrayList<>(MAX_ENTRIES);
            boolean sender = false;
            try {
                Pending first = carried;
                carried = null;
                if (first == null) {
                    first = queued.poll(200, TimeUnit.MILLISECONDS);
                    if (first == null || !first.state.compareAndSet(0, 1)) {
                        continue;
                    }
                }
                batch.add(first);
                // A turn on the wire first: while it is not this batch's, entries keep queueing for it.
                awaitTurn();
                inFlight.acquire();
                sender = true;
                int bytes = first.bytes;
                long deadline = System.nanoTime() + (busy ? linger(lingerNanos, roundTrip.get()) : 0);
                while (batch.size() < MAX_ENTRIES) {
                    Pending next = queued.poll();
                    if (next == null) {
                        long wait = deadline - System.nanoTime();
                        if (wait <= 0) {
                            break;
                        }
                        next = queued.poll(wait, TimeUnit.NANOSECONDS);
                        if (next == null) {
                            break;
                        }
                    }
                    if (!next.state.compareAndSet(0, 1)) {
                        continue;
                    }
                    if (bytes + next.bytes > MAX_BATCH_BYTES) {
                        carried = next;
                        break;
                    }
                    batch.add(next);
                    bytes += next.bytes;
                }
                busy = batch.size() > 1;
                Thread.ofVirtual().name(name + "-send").start(() -> {
                    try {
                        sendBatch(batch);
                    } finally {
                        inFlight.release();
                        turns.lock();
                        try {
                            turn.signal();
                        } finally {
                            turns.unlock();
                        }
                    }
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                if (sender) {
                    inFlight.release();
                }
                stopped(batch);
                if (carried != null) {
                    stopped(List.of(carried));
                }
                return;
            } catch (Error e) {
                // An OutOfMemoryError while the batch formed or its thread started must not end the collector: every later
                // sender would wait for ever. This batch's senders are told it failed (their jobs retry), and it goes on.
                if (sender) {
                    inFlight.release();
                }
                failed(batch, e);
                if (carried != null) {
                    failed(List.of(carried), e);
                    carried = null;
                }
                LOG.errorf("The %s collector met %s; it goes on", name, e.getClass().getSimpleName());
            }
        }
    }

    private static void failed(List<Pending> batch, Throwable e) {
        batch.forEach(p -> p.done.completeExceptionally(e));
    }

    /**
     * Waits until the batch being formed may go on the wire: at once when no batch is there; beside batches
     * already there only once it can leave full (the queued entries and its leader make ten) and a sender is
     * free. So a batch in flight lets the next one gather, under load every batch that overlaps another is
     * full, and a queue that fills batches faster than SQS answers them still gets up to {@code senders} at once.
     */
    private void awaitTurn() throws InterruptedException {
        turns.lock();
        try {
            // Set before the first look at the queue, so a sender that fills the batch after that look signals.
            awaitingTurn = true;
            while (!myTurn()) {
                turn.await();
            }
        } finally {
            awaitingTurn = false;
            turns.unlock();
        }
    }

    private boolean myTurn() {
        int free = inFlight.availablePermits();
        return free == senders || free > 0 && queued.size() + 1 >= MAX_ENTRIES;
    }

    /**
     * How long a batch waits for company: the configured linger, but never more than half a recent round trip,
     * so lingering adds at most half again to the time a sender waits for SQS.
     */
    static long linger(long configuredNanos, long roundTripNanos) {
        return Math.min(configuredNanos, roundTripNanos / 2);
    }

    private static void stopped(List<Pending> batch) {
        failed(batch, SqsException.builder().message("the sender was stopped before sending").statusCode(500).build());
    }

    /** Sends the batch and answers each waiting sender: accepted, or the error SQS gave for its entry or for the request. */
    private void send(List<Pending> formed) {
        // Entries go on the wire now, less those their senders withdrew while the batch was formed.
        List<Pending> batch = new ArrayList<>(formed.size());
        for (Pending p : formed) {
            if (p.state.compareAndSet(1, 3)) {
                batch.add(p);
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        Map<String, Pending> byId = new HashMap<>();
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            byId.put(p.entry.id(), p);
            entries.add(p.entry);
        }
        SendMessageBatchResponse r;
        long t0 = System.nanoTime();
        try {
            r = sqs.sendMessageBatch(b -> b.queueUrl(queueUrl.get()).entries(entries));
            long took = System.nanoTime() - t0;
            roundTrip.accumulateAndGet(took, (avg, x) -> avg == 0 ? x : avg + (x - avg) / 8);
        } catch (RuntimeException | Error e) {
            // An Error too (an OutOfMemoryError while the SDK read the answer): a sender left unanswered waits for ever.
            failed(batch, e);
            return;
        }
        if (r.hasSuccessful()) {
            for (SendMessageBatchResultEntry ok : r.successful()) {
                Pending p = byId.remove(ok.id());
                if (p != null) {
                    p.done.complete(null);
                }
            }
        }
        if (r.hasFailed()) {
            for (BatchResultErrorEntry failed : r.failed()) {
                Pending p = byId.remove(failed.id());
                if (p != null) {
                    p.done.completeExceptionally(refused(failed));
                }
            }
        }
        // An entry SQS answered neither way: its fate is unknown, which the sender must learn as a failure.
        byId.values().forEach(p -> p.done.completeExceptionally(SqsException.builder()
                .message("SendMessageBatch answered nothing for this entry").statusCode(500).build()));
    }

    /** Sends the batch; whatever ends it, every sender in it is answered. */
    private void sendBatch(List<Pending> batch) {
        try {
            send(batch);
        } catch (RuntimeException | Error e) {
            failed(batch.stream().filter(p -> !p.done.isDone()).toList(), e);
            LOG.errorf("A %s batch met %s after its answer", name, e.getClass().getSimpleName());
        }
    }

    private static SqsException refused(BatchResultErrorEntry failed) {
        return (SqsException) SqsException.builder().message(failed.code() + ": " + failed.message())
                .statusCode(Boolean.TRUE.equals(failed.senderFault()) ? 400 : 500)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(failed.code()).errorMessage(failed.message()).build()).build();
    }

    /** The size SQS counts toward a batch's limit: the body and each attribute's name, type and value. */
    static int size(SendMessageBatchRequestEntry e) {
        int n = e.messageBody() == null ? 0 : e.messageBody().getBytes(StandardCharsets.UTF_8).length;
        if (e.hasMessageAttributes()) {
            for (Map.Entry<String, MessageAttributeValue> a : e.messageAttributes().entrySet()) {
                MessageAttributeValue v = a.getValue();
                n += a.getKey().length() + (v.dataType() == null ? 0 : v.dataType().length())
                        + (v.stringValue() != null ? v.stringValue().getBytes(StandardCharsets.UTF_8).length : 0)
                        + (v.binaryValue() != null ? v.binaryValue().asByteArray().length : 0);
            }
        }
        return n;
    }

    /** Stops taking new entries into batches, sends what is queued, and waits for the batches on the wire. */
    @Override
    public void close() {
        open = false;
        try {
            collector.join(java.time.Duration.ofSeconds(10));
            if (inFlight.tryAcquire(senders, 10, TimeUnit.SECONDS)) {
                inFlight.release(senders);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        List<Pending> left = new ArrayList<>();
        queued.drainTo(left);
        for (Pending p : left) {
            if (p.state.compareAndSet(0, 1)) {
                sendBatch(List.of(p));
            }
        }
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.ledger.StoreUnavailable;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.LockSupport;

/**
 * Puts whole ledger items up to 25 at a time ({@code BatchWriteItem}), for the one write that may go without a
 * condition: a succeeded attempt's ending, while its writer's lease still has a long way to run (see
 * {@link DynamoLedgerStore#writeSucceeded}). No thread of its own and no timer: a writer queues its item, and
 * when no batch is on the wire it takes the queue's head (its own item and whatever queued with it) and sends
 * it; while one is, the items gather behind it and the writer whose batch returns hands the turn to the head of
 * the queue. Under load batches leave fuller; a lone writer is not delayed.
 * <p>
 * An item goes only while its {@code sendBy} is at least {@link #SHORTEST_CALL} away, and its batch's call is bounded by
 * the earliest send-by in it: one whose turn comes later is given back unsent, as is every
 * item of a batch that failed or that DynamoDB left unprocessed, and its writer writes it on its own with the
 * version condition (a batch that failed without an answer may have landed: the conditional write recognises
 * the item it finds as its own).
 */
final class EndingBatcher {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(EndingBatcher.class);
    /** The longest a batch's call may take, retries included (the client's own calls are bounded at 6 s). */
    static final Duration LONGEST_CALL = Duration.ofSeconds(5);
    /** The shortest: an item whose send-by is nearer than this is not batched. */
    static final Duration SHORTEST_CALL = Duration.ofMillis(500);
    /** How long a refused batch stops batching. */
    static final Duration REFUSED_PAUSE = Duration.ofMinutes(5);
    /** BatchWriteItem's limit. Every item here is within one write unit (1 KB), far from its 16 MB. */
    static final int MAX_ITEMS = 25;

    private final Wire wire;
    private final String key;
    private final Clock clock;
    private final ConcurrentLinkedQueue<Entry> queued = new ConcurrentLinkedQueue<>();
    /**
     * Until when nothing is batched (epoch ms), after DynamoDB refused a batch (a role without
     * {@code dynamodb:BatchWriteItem}): each ending meanwhile goes in its own conditional write, not a refused batch first.
     */
    private volatile long refusedUntil;
    /** Batches on the wire at once. */
    private final Semaphore turns;
    private final java.util.concurrent.atomic.LongAdder turnsTaken = new java.util.concurrent.atomic.LongAdder();

    /** Sends one batch of whole items, bounded by {@code callTimeout}, and answers the items it left unprocessed. */
    @FunctionalInterface
    interface Wire {
        List<Map<String, AttributeValue>> put(List<Map<String, AttributeValue>> items, Duration callTimeout);
    }

    /** {@code key}: the attribute that tells the items apart (the table's key). */
    EndingBatcher(Wire wire, String key, Clock clock, int onTheWire) {
        this.wire = wire;
        this.key = key;
        this.clock = clock;
        this.turns = new Semaphore(onTheWire);
    }

    /** What became of one item. */
    enum Result {
        /** DynamoDB wrote it. */
        WRITTEN,
        /** It was not sent (its send-by passed, or its writer was interrupted while it queued): nothing landed. */
        NOT_SENT,
        /** Its batch failed, or DynamoDB left it unprocessed: it may have landed (a failure without an answer) or not. */
        FAILED
    }

    private static final class Entry {
        final Map<String, AttributeValue> item;
        final Instant sendBy;
        final Thread writer = Thread.currentThread();
        /** Null while the entry waits for an answer. */
        volatile Result result;
        /** Set by the writer that takes the entry into its batch: from then on it cannot be withdrawn. */
        volatile boolean taken;

        Entry(Map<String, AttributeValue> item, Instant sendBy) {
            this.item = item;
            this.sendBy = sendBy;
        }

        void answer(Result r) {
            result = r;
            LockSupport.unpark(writer);
        }
    }

    /**
     * Writes {@code item} in a batch if its turn comes before {@code sendBy}, and answers what became of it. Returns once
     * it is known; an {@link Error} of the batch this writer sent reaches it as itself, after every other writer in
     * that batch has been answered.
     */
    Result put(Map<String, AttributeValue> item, Instant sendBy) {
        if ((refusedUntil != 0 && clock.millis() < refusedUntil) || Thread.currentThread().isInterrupted()) {
            // An interrupted writer does not lead a batch either: the SDK would fail it for every writer in it.
            return Result.NOT_SENT;
        }
        Entry mine = new Entry(item, sendBy);
        queued.add(mine);
        boolean interrupted = false;
        try {
            while (mine.result == null) {
                if (Thread.interrupted()) {
                    interrupted = true;
                    // Withdrawn while it still queues, it is known not to have been sent (and its writer does not lead a
                    // batch the SDK would abort for everyone in it); once taken, its batch answers soon (a call bounded
                    // below) and the wait goes on with the interrupt set aside.
                    if (!mine.taken && queued.remove(mine)) {
                        // It may have been woken to take a turn just given back: the turn passes to the next in line.
                        handOff();
                        return Result.NOT_SENT;
                    }
                }
                // Only a writer whose item still queues takes a turn: one whose item is in a batch on the wire parks until
                // it is answered (looping on a free turn, it would spin a carrier thread for the batch's round trip).
                if (!mine.taken && turns.tryAcquire()) {
                    turnsTaken.increment();
                    try {
                        sendHead();
                    } finally {
                        turns.release();
                        handOff();
                    }
                    continue;
                }
                LockSupport.park(this);
            }
            return mine.result;
        } catch (Error fatal) {
            // Out of the batch this writer sent: its own item, if still queued behind it, is not sent for a writer gone, and
            // the turn it may have been handed passes on.
            queued.remove(mine);
            handOff();
            throw fatal;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Turns taken so far (for tests): one per batch sent, or per turn that found nothing to send. */
    long turnsTaken() {
        return turnsTaken.sum();
    }

    /** Items waiting for their turn. */
    int queued() {
        return queued.size();
    }

    /**
     * Wakes the writer nearest the head of the queue, if any, to take the turn just given back: not this thread's own (a
     * leader whose item queues behind its batch is busy with that batch).
     */
    private void handOff() {
        Thread me = Thread.currentThread();
        for (Entry e : queued) {
            if (e.writer != me) {
                LockSupport.unpark(e.writer);
                return;
            }
        }
    }

    /**
     * Takes up to {@link #MAX_ITEMS} queued items that may still go and writes them in one batch. The request may not outlive
     * the earliest send-by among them (nor {@link #LONGEST_CALL}): the SDK gives it up then, retries included, so no item is
     * sent after its own.
     */
    private void sendHead() {
        List<Entry> batch = new ArrayList<>(MAX_ITEMS);
        try {
            Instant now = clock.instant();
            // The last moment an item may be taken: one whose send-by is nearer would have its batch's call bounded by a
            // timeout too short to mean anything (the SDK counts whole milliseconds, and takes 0 for none at all).
            Instant cutoff = now.plus(SHORTEST_CALL);
            boolean refused = refusedUntil != 0 && now.toEpochMilli() < refusedUntil;
            Instant earliest = null;
            Entry e;
            while (batch.size() < MAX_ITEMS && (e = queued.poll()) != null) {
                e.taken = true;
                if (!refused && !e.sendBy.isBefore(cutoff)) {
                    batch.add(e);
                    earliest = earliest == null || e.sendBy.isBefore(earliest) ? e.sendBy : earliest;
                } else {
                    e.answer(Result.NOT_SENT);
                }
            }
            if (!queued.isEmpty()) {
                // More than one batch's worth waits: another free turn, if any, need not wait for this batch to return.
                handOff();
            }
            if (batch.isEmpty()) {
                return;
            }
            send(batch, Duration.between(now, earliest));
        } finally {
            // Whatever ended the batch (an Error while it was built, say), none of its writers is left waiting.
            for (Entry b : batch) {
                if (b.result == null) {
                    b.answer(Result.FAILED);
                }
            }
        }
    }

    private void send(List<Entry> batch, Duration untilEarliestSendBy) {
        List<Map<String, AttributeValue>> items = new ArrayList<>(batch.size());
        for (Entry b : batch) {
            items.add(b.item);
        }
        List<Map<String, AttributeValue>> left;
        try {
            left = wire.put(items, untilEarliestSendBy.compareTo(LONGEST_CALL) < 0 ? untilEarliestSendBy : LONGEST_CALL);
        } catch (RuntimeException failed) {
            if (failed instanceof StoreUnavailable s && s.refused()) {
                refusedUntil = clock.millis() + REFUSED_PAUSE.toMillis();
                LOG.warnf("The ledger refused a BatchWriteItem of succeeded endings (%s): for %s each ending is written on its"
                        + " own. Grant dynamodb:BatchWriteItem on the ledger table, or set"
                        + " poison-guard.ledger.ending-batches-in-flight=0", s.getMessage(), REFUSED_PAUSE);
            }
            // Each writer writes its own with the condition, and meets the same fault there if it lasts.
            batch.forEach(b -> b.answer(Result.FAILED));
            return;
        }
        Set<AttributeValue> unprocessed = new HashSet<>();
        for (Map<String, AttributeValue> item : left) {
            unprocessed.add(item.get(key));
        }
        for (Entry b : batch) {
            b.answer(unprocessed.contains(b.item.get(key)) ? Result.FAILED : Result.WRITTEN);
        }
    }
}

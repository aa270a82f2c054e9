package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.ledger.LedgerRecord;

import java.time.Instant;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One attempt in flight: the message, the newest ledger record this worker wrote for it, and a lock
 * that keeps the heartbeat and the final write from racing on the record's version.
 */
final class Running {
    final InboundMessage message;
    final ReentrantLock lock = new ReentrantLock();
    private LedgerRecord record;
    private Instant extendedAt;
    private Instant hiddenAt;
    private volatile Instant deadline;
    private boolean finished;
    private volatile boolean takenOver;

    Running(InboundMessage message, LedgerRecord record, Instant startedAt, Instant deadline) {
        this.message = message;
        this.record = record;
        this.extendedAt = startedAt;
        this.hiddenAt = startedAt;
        this.deadline = deadline;
    }

    /** Past this instant the attempt is over whatever its handler does: no renewal. */
    Instant deadline() {
        return deadline;
    }

    /** Renewals go on until {@code until}: a handler cut off at its deadline is waited for under its lease. */
    void renewUntil(Instant until) {
        if (until.isAfter(deadline)) {
            deadline = until;
        }
    }

    LedgerRecord record() {
        return record;
    }

    void record(LedgerRecord r) {
        this.record = r;
    }

    Instant extendedAt() {
        return extendedAt;
    }

    void extendedAt(Instant t) {
        this.extendedAt = t;
    }

    /** When this worker last hid the copy again (or took it). */
    Instant hiddenAt() {
        return hiddenAt;
    }

    void hiddenAt(Instant t) {
        this.hiddenAt = t;
    }

    boolean finished() {
        return finished;
    }

    void finish() {
        finished = true;
    }

    /** Whether the ledger was found to say that another attempt holds the job: this one may no longer act as it. */
    boolean takenOver() {
        return takenOver;
    }

    void takenOver(boolean b) {
        takenOver = b;
    }
}

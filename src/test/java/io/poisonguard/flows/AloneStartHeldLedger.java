package io.poisonguard.flows;

import io.poisonguard.config.Names;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.quarkus.arc.ClientProxy;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The ledger on the emulator, with one hand on the order its writes land in: once armed, the next attempt start
 * recorded as running alone is held until another job's start has landed (at most 10 s), so the copy that came into
 * the worker's empty lane first is the last of the two to have its attempt made durable. Enabled only by the profiles
 * that name it.
 */
@Alternative
@Singleton
public class AloneStartHeldLedger implements LedgerStore {
    private final LedgerStore delegate;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final CountDownLatch otherStartLanded = new CountDownLatch(1);
    private final CountDownLatch aloneStartLanded = new CountDownLatch(1);
    private final CountDownLatch aloneStartHeld = new CountDownLatch(1);
    private volatile boolean overtaken;

    public AloneStartHeldLedger(DynamoDbClient dynamo, Names names, Clock clock, PoisonGuardConfig config) {
        this.delegate = new DynamoLedgerStore(ClientProxy.unwrap(dynamo), names.ledgerTable(), clock, config.ledger().legacyKeys(),
                config.ledger().itemFormat() == PoisonGuardConfig.Ledger.ItemFormat.COMPACT);
    }

    /** Holds the next start recorded as running alone until another job's start has landed. */
    void arm() {
        armed.set(true);
    }

    /** Whether the held start landed after another job's start (the order the test needs happened). */
    boolean overtaken() {
        return overtaken;
    }

    /** Waits up to {@code wait} for a start recorded as running alone to be held; false if none came. */
    boolean awaitHeld(Duration wait) throws InterruptedException {
        return aloneStartHeld.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Waits up to {@code wait} for the held start to land; false if it has not. */
    boolean awaitAloneStart(Duration wait) throws InterruptedException {
        return aloneStartLanded.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public Optional<LedgerRecord> find(JobKey key) {
        return delegate.find(key);
    }

    @Override
    public LedgerRecord write(LedgerRecord next) {
        AttemptEntry entry = next.currentEntry();
        boolean start = next.state() == JobState.ACTIVE && entry != null && entry.outcome() == AttemptOutcome.RUNNING;
        boolean held = start && entry.isolated() && armed.compareAndSet(true, false);
        if (held) {
            aloneStartHeld.countDown();
            try {
                overtaken = otherStartLanded.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LedgerRecord written = delegate.write(next);
        if (held) {
            aloneStartLanded.countDown();
        } else if (start && !entry.isolated()) {
            otherStartLanded.countDown();
        }
        return written;
    }
}

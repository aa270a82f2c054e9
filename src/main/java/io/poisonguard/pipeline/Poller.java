package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.observability.Metrics;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The receive loop: long-polls the main queue for as many messages as there are free slots (at most
 * 10, the ReceiveMessage limit), and runs each on a virtual thread. Concurrency (handlers running at once)
 * is bounded by the working slots ({@link Turns}: handed out in order, a waiting message parked without a timer),
 * and a job's ledger writes are made beside the handlers rather than in their slots: every message held makes its
 * attempt durable (the intake) as soon as it is received and then waits for a slot, and a job whose handler has
 * returned hands its slot on while its outcome is written, up to the concurrency plus the reserve of such outcomes
 * at once ({@link Hold}); in a one-job worker, a job to be recorded as running alone takes the slot before its intake
 * write instead and keeps it through its outcome ({@link JobProcessor.Turn#claim}). The process holds a reserve of messages beyond the concurrency,
 * received but not started, so a freed slot need not wait a ReceiveMessage round trip for its next job:
 * {@code consumer.prefetch}, or, unset, sized while it runs from the jobs' and the refill's times ({@link Reserve}:
 * the concurrency and a quarter, at most 10, for slow jobs; up to 100 (12 a slot) for jobs that end faster than a receive and its
 * intakes bring the next). Under a backlog that reserve is topped up by one receive once four fifths of it are
 * spent ({@link #fill}). A prefetched message that finds no slot within half its
 * visibility timeout is given back uncounted rather than started late (its copy would reappear to another
 * worker while it ran here).
 */
@Singleton
public class Poller {
    private static final Logger LOG = Logger.getLogger(Poller.class);
    private static final Duration ERROR_PAUSE = Duration.ofSeconds(1);
    /** How often a paused poller looks at the breakers again. */
    private static final Duration GATE_PAUSE = Duration.ofMillis(200);
    /** How long shutdown waits for abandoned attempts to record their release. */
    private static final Duration ABANDON_WAIT = Duration.ofSeconds(5);
    /** How long past its long-poll wait shutdown waits for the last ReceiveMessage to answer. */
    private static final Duration RECEIVE_MARGIN = Duration.ofSeconds(5);
    /** A message whose receive says nothing of the refill time (it did not get all it asked for). */
    private static final long NOT_A_REFILL = Long.MIN_VALUE;

    private final SourceQueue source;
    private final JobProcessor processor;
    private final Metrics metrics;
    private final PoisonGuardConfig.Consumer settings;
    private final ConsumptionGate gate;
    private final IsolationLane lane;
    /** Messages the worker may hold: the concurrency plus the reserve ({@link #reserved}). */
    private final Capacity slots;
    /** Messages being worked on: the concurrency. A prefetched message waits here for its turn, in order, without a timer. */
    private final Turns working;
    /**
     * Messages whose handler returned and whose outcome is being recorded, outside the working slots: as many as the
     * worker may hold ({@link #settlingPlaces}), resized with the reserve.
     */
    private final Capacity settling;
    /**
     * Jobs whose handler returned while every settling place was taken, oldest first: each keeps its working slot
     * while its outcome is written, until an ending job hands it its settling place ({@link #placeFreed}).
     */
    private final java.util.concurrent.ConcurrentLinkedQueue<Hold> keepers = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** The size of the reserve held beyond the concurrency. */
    private final Reserve reserve;
    /** The reserve {@link #slots} and {@link #settling} are sized for now; changed by the receiver thread only. */
    private int reserved;
    /** How long a received message may wait for a working slot: half its visibility timeout. */
    private final long maxWaitNanos;
    private volatile boolean running;
    /**
     * Whether the receiver is inside a ReceiveMessage (guarded by itself): stop() does not interrupt it there, since the
     * SDK throws away the answer of an interrupted thread after it arrived, and the messages in it would stay invisible
     * for their visibility timeout instead of going back at once.
     */
    private final Object receiveCall = new Object();
    private boolean inReceive;
    private volatile Thread receiver;
    private volatile String receiverEnded;
    private ExecutorService workers;

    public Poller(SourceQueue source, JobProcessor processor, Metrics metrics, PoisonGuardConfig config, ConsumptionGate gate,
                  IsolationLane lane) {
        this.gate = gate;
        this.lane = lane;
        this.source = source;
        this.processor = processor;
        this.metrics = metrics;
        this.settings = config.consumer();
        this.reserve = reserve(settings);
        this.reserved = reserve.size();
        this.slots = new Capacity(settings.concurrency() + reserved);
        this.working = new Turns(settings.concurrency(), Turns.tickFor(settings.visibilityTimeout().dividedBy(2)));
        this.settling = new Capacity(settlingPlaces(settings.concurrency(), reserved));
        metrics.reserve(reserved);
        this.maxWaitNanos = settings.visibilityTimeout().dividedBy(2).toNanos();
    }

    /**
     * The most a stopping worker may still live once its shutdown grace has run out and its running attempts were given
     * back: the wait for them to record that, the last long poll and its margin, the alerts' delivery, and 5 s more.
     */
    static Duration restOfShutdown(PoisonGuardConfig.Consumer settings) {
        return ABANDON_WAIT.plus(settings.receiveWait()).plus(RECEIVE_MARGIN).plus(io.poisonguard.alerts.Alerts.DELIVERY_AT_SHUTDOWN)
                .plus(Duration.ofSeconds(5));
    }

    /**
     * Messages held beyond the concurrency: {@code consumer.prefetch}, or, unset, a reserve sized from the jobs'
     * times ({@link Reserve}) that starts at, and for slow jobs stays at, the concurrency and a quarter, at most 10.
     * Ten is one full receive: with that reserve a backlog is read ten messages (or eight, see {@link #fill}) per
     * ReceiveMessage however low the concurrency. Tied to the concurrency below that, so a prefetched message waits
     * about one job's run (at most a job and a quarter) before it starts, however slow the jobs are.
     */
    static Reserve reserve(PoisonGuardConfig.Consumer settings) {
        int concurrency = settings.concurrency();
        return settings.prefetch().isPresent() ? Reserve.fixed(concurrency, settings.prefetch().getAsInt())
                : Reserve.sized(concurrency, settings.visibilityTimeout().dividedBy(2));
    }

    /**
     * Brings the places to the reserve's size now: grown, the receiver may take more at once; shrunk, places given
     * back by ending jobs are kept until the worker holds no more than the new size (nothing held is let go).
     */
    private void resize() {
        int next = reserve.size();
        if (next != reserved) {
            slots.resize(next - reserved);
            settling.resize(next - reserved);
            reserved = next;
            metrics.reserve(next);
        }
    }

    /** A semaphore whose permits can be taken away ahead of their release. */
    private static final class Capacity extends Semaphore {
        Capacity(int permits) {
            super(permits);
        }

        void resize(int by) {
            if (by > 0) {
                release(by);
            } else if (by < 0) {
                reducePermits(-by);
            }
        }
    }

    /**
     * Outcomes that may be recorded at once outside the working slots: the concurrency plus the reserve. An outcome
     * waits on round trips, not on a core (the notices its handler deferred, then the ledger write that ends the
     * attempt): at concurrency 8 that is about as long as eight handler runs on a busy machine, and with only the
     * concurrency's worth of places a third of the handlers that returned found none and kept their slot through
     * their outcome, with the cores partly idle (BENCHMARKS.md, eighteenth table). The bound is still needed: while
     * the ledger or SQS is slow, outcomes pile up here, and once the places are taken each returning handler keeps its
     * slot, which stops new work. A worker thus holds at most 2 x (concurrency + reserve) messages unfinished:
     * concurrency + reserve held (received, handler not yet returned) and as many settling. A job that kept its slot
     * for want of a place gets the first place an ending job frees and hands its slot on then, not at the end of its
     * own outcome: kept for a whole outcome, each such slot idled for its round trips, and at concurrency 8 that
     * bounded the worker (BENCHMARKS.md, thirty-third table).
     */
    static int settlingPlaces(int concurrency, int reserve) {
        return concurrency + reserve;
    }

    /**
     * Free slots a receive waits for under a backlog (up to {@code receive-linger}; an idle worker has them all
     * at once): four fifths of the reserve, so a receive goes out when the reserve of received, unstarted
     * messages is down to a fifth, which covers the jobs that end during the receive's round trip, and brings
     * the reserve back to full. Never less than a quarter of the concurrency (what a small explicit prefetch
     * would otherwise make one-message receives), never more than {@code max-messages}.
     */
    static int fill(int concurrency, int reserve, int maxMessages) {
        return Math.min(maxMessages, Math.max(1, Math.max(concurrency / 4, reserve - reserve / 5)));
    }

    /**
     * With {@code have} slots in hand and fewer than {@code enough}, waits up to {@code receive-linger} for
     * more to free up; returns how many more it took. Under a backlog jobs end one by one, and receiving at
     * each end would read one message per ReceiveMessage.
     */
    private int linger(int have, int enough) throws InterruptedException {
        int more = 0;
        long until = System.nanoTime() + settings.receiveLinger().toNanos();
        while (have + more < enough) {
            long left = until - System.nanoTime();
            if (left <= 0 || !slots.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                break;
            }
            more += 1 + slots.drainPermits();
        }
        return more;
    }

    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        working.open();
        lane.waitOn(true);
        workers = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("poison-guard-job-", 0).factory());
        receiver = Thread.ofPlatform().name("poison-guard-receiver").daemon().start(this::receiveLoop);
        LOG.infof("Polling with concurrency %d (prefetch %s), long-poll %ss, visibility %ss", settings.concurrency(),
                reserve.adapts() ? reserve.floor() + "-" + reserve.ceiling() + " by job time" : String.valueOf(reserve.floor()),
                settings.receiveWait().toSeconds(), settings.visibilityTimeout().toSeconds());
    }

    public boolean isRunning() {
        return running;
    }

    /**
     * Why the receiver thread ended while the worker was meant to be polling (an Error out of a check or a receive): the
     * worker then receives nothing, so its liveness reports it and the orchestrator replaces it. Empty while it runs.
     */
    public Optional<String> receiverDown() {
        Thread r = receiver;
        String why = receiverEnded;
        return running && r != null && !r.isAlive() ? Optional.of("the receiver thread ended" + (why == null ? "" : " (" + why + ")"))
                : Optional.empty();
    }

    private void receiveLoop() {
        try {
            receiving();
        } catch (Throwable t) {
            // Not thrown on: the thread ends either way, and liveness is what tells (receiverDown).
            receiverEnded = t.getClass().getSimpleName();
            LOG.errorf(t, "The receiver thread ended by %s; the worker reports itself not live", t.getClass().getName());
        }
    }

    private void receiving() {
        while (running) {
            ConsumptionGate.Admit admit;
            try {
                admit = gate.admit();
            } catch (RuntimeException e) {
                // The receiver must outlive whatever a gate's check throws: the worker would go on saying it polls.
                LOG.warnf("The consumption gate failed (%s); asking again in %ss", e.getClass().getSimpleName(), ERROR_PAUSE.toSeconds());
                pause(ERROR_PAUSE);
                continue;
            }
            boolean paused = admit == ConsumptionGate.Admit.PAUSED || (admit == ConsumptionGate.Admit.PROBE && metrics.inFlight().get() > 0);
            metrics.paused(paused);
            // A suspect waits for or runs in the isolation lane: take no work to run beside it.
            paused |= lane.isolating();
            if (paused) {
                pause(GATE_PAUSE);
                continue;
            }
            int max = admit == ConsumptionGate.Admit.PROBE ? 1 : settings.maxMessages();
            int want;
            try {
                resize();
                slots.acquire();
                want = 1 + slots.drainPermits();
                want += linger(want, Math.min(max, fill(settings.concurrency(), reserved, settings.maxMessages())));
                if (want > max) {
                    slots.release(want - max);
                    want = max;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            List<InboundMessage> batch;
            synchronized (receiveCall) {
                if (!running) {
                    slots.release(want);
                    return;
                }
                inReceive = true;
            }
            long sentAt = System.nanoTime();
            try {
                batch = source.receive(want, settings.receiveWait(), settings.visibilityTimeout());
            } catch (RuntimeException e) {
                slots.release(want);
                if (!running) {
                    return; // interrupted by stop()
                }
                LOG.warnf("ReceiveMessage failed (%s); retrying in %ss", e.getClass().getSimpleName(), ERROR_PAUSE.toSeconds());
                pause(ERROR_PAUSE);
                continue;
            } finally {
                synchronized (receiveCall) {
                    inReceive = false;
                }
            }
            slots.release(want - batch.size());
            // Only a receive that got all it asked for tells how long a refill takes under a backlog.
            long refillFrom = batch.size() == want ? sentAt : NOT_A_REFILL;
            long startBy = System.nanoTime() + maxWaitNanos;
            for (InboundMessage m : batch) {
                if (!running) {
                    release(m);
                    slots.release();
                    continue;
                }
                metrics.inFlight().incrementAndGet();
                try {
                    workers.execute(() -> work(m, startBy, refillFrom));
                } catch (java.util.concurrent.RejectedExecutionException stopping) {
                    // stop() shut the executor between the running check and here: give the message back.
                    metrics.inFlight().decrementAndGet();
                    slots.release();
                    release(m);
                }
            }
        }
    }

    /**
     * Runs one received message: its attempt is made durable at once (the intake, beside the handlers running), then
     * it waits for a working slot and its handler runs. The ledger write of a prefetched message is thus paid while
     * it waits, not after its slot frees: at concurrency 8 a write takes several handler runs, and a slot that had
     * to wait for its next job's write would idle. It is given back uncounted if no slot frees before {@code startBy}
     * (half its visibility after it was received), or if consumption was paused by the time its turn came: a
     * dependency's breaker that opened while it waited must not be paid for by an attempt it would fail (and under
     * a half-open breaker only the probe runs). Given back after its intake, its attempt is recorded as ABANDONED
     * ({@link OutcomeStage#giveBack}).
     */
    private void work(InboundMessage m, long startBy, long refillFrom) {
        Hold hold = new Hold(startBy, refillFrom);
        try {
            if (!running) {
                // Stopping: a prefetched message that never started goes back at once.
                release(m);
                return;
            }
            if (gate.admit() == ConsumptionGate.Admit.PAUSED) {
                metrics.outcome(Metrics.Outcome.PAUSED_RETURNED, null);
                LOG.debugf("Message %s: consumption paused before it started; given back uncounted", m.messageId());
                release(m);
                return;
            }
            processor.process(m, hold);
        } catch (RuntimeException | Error e) {
            LOG.errorf("Message %s: processing failed (%s: %s); it will redeliver", m.messageId(),
                    e.getClass().getSimpleName(), io.poisonguard.failure.Scrubber.scrub(e.getMessage(), 200));
        } finally {
            hold.end();
            metrics.inFlight().decrementAndGet();
            if (hold.interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether a job that waited for its turn must not start: consumption is paused, or half-open (only a probe, received alone, runs). */
    private static boolean paused(ConsumptionGate.Admit now) {
        return now == ConsumptionGate.Admit.PAUSED || now == ConsumptionGate.Admit.PROBE;
    }

    /**
     * A settling place was freed by a job that ended: it goes to the oldest job still keeping its working slot for want
     * of one (which then hands that slot on), or back to the pool when none waits or the pool was shrunk below the
     * places in use ({@link #resize}: a shrink is paid back before any place is handed on).
     */
    private void placeFreed() {
        if (settling.availablePermits() >= 0) {
            for (Hold k; (k = keepers.poll()) != null; ) {
                if (k.settleNow()) {
                    return;
                }
            }
        }
        settling.release();
    }

    /**
     * What one message holds, on its own job thread: a place among the messages held ({@link #slots}) from its
     * receive, through its intake and its wait for a working slot; the working slot while its handler runs (from
     * before its intake write to its end when it claimed the slot); and, once its handler has returned, a settling
     * place instead of both while its outcome is recorded ({@link #settling}).
     */
    private final class Hold implements JobProcessor.Turn {
        private final long startBy;
        private final long refillFrom;
        private long startedAt;
        boolean turnTaken;
        boolean working;
        /** The working slot was taken before the intake, for a copy recorded as running alone: kept to the job's end. */
        boolean claimed;
        boolean slot = true;
        boolean settle;
        /** Its handler returned with no settling place free: it keeps its working slot and waits in {@link #keepers}. */
        private boolean keeping;
        boolean interrupted;

        Hold(long startBy, long refillFrom) {
            this.startBy = startBy;
            this.refillFrom = refillFrom;
        }

        @Override
        public boolean claim() {
            if (!working && Poller.this.working.tryTake()) {
                working = true;
                claimed = true;
            }
            return working;
        }

        @Override
        public void unclaim() {
            if (claimed) {
                claimed = false;
                working = false;
                Poller.this.working.release();
            }
        }

        /** Takes a working slot once the intake is durable (unless claimed before it), waiting until {@code startBy} at most. */
        @Override
        public Optional<String> start() {
            if (turnTaken) {
                return Optional.empty();
            }
            turnTaken = true;
            if (refillFrom != NOT_A_REFILL) {
                reserve.refilled(System.nanoTime() - refillFrom);
            }
            boolean waited;
            try {
                // Slots go in the order messages asked for them: a message just taken in does not take a freed slot
                // ahead of prefetched ones already waiting for it.
                waited = !claimed && !Poller.this.working.tryTake();
                working = !waited || Poller.this.working.take(startBy);
            } catch (InterruptedException e) {
                // The interrupt is restored once the job ends (work()), not before the write that gives the attempt back.
                interrupted = true;
                return Optional.of("the worker was interrupted before the attempt started");
            }
            if (!working && !running) {
                return Optional.of("the worker is stopping");
            }
            if (!working) {
                metrics.outcome(Metrics.Outcome.PREFETCH_RETURNED, null);
                return Optional.of("no handler slot freed within half the visibility timeout");
            }
            if (!running) {
                return Optional.of("the worker is stopping");
            }
            if (waited && paused(gate.admit())) {
                metrics.outcome(Metrics.Outcome.PAUSED_RETURNED, null);
                return Optional.of("consumption paused before the attempt started");
            }
            startedAt = System.nanoTime();
            return Optional.empty();
        }

        /**
         * The handler returned: if a settling place is free, the working slot and the held place go to the next
         * messages while this one's outcome is written (so at most {@code concurrency} handlers run, and up to
         * {@link #settlingPlaces} outcomes are recorded beside them, without eating into the prefetched reserve). None
         * free, or the slot claimed for a job running alone: this message keeps its slot to the end.
         */
        @Override
        public void handlerReturned() {
            if (working && !settle) {
                reserve.handlerRan(System.nanoTime() - startedAt);
            }
            // A job recorded as running alone keeps the only slot until its outcome is written: a job started while it
            // settles would run beside it, and a crash then would be charged to it.
            if (!working || settle || claimed) {
                return;
            }
            if (settling.tryAcquire()) {
                settled();
                return;
            }
            // Every place is taken: keep the slot, and take the first place an ending job frees.
            synchronized (this) {
                keeping = true;
            }
            keepers.add(this);
            // A place freed between the try above and joining the queue went back to the pool, not to this job.
            if (settling.tryAcquire() && !settleNow()) {
                placeFreed(); // handed one meanwhile: the spare goes on
            }
        }

        /** Takes a settling place held for it (handed on by an ending job, or just acquired), if it still keeps its slot. */
        synchronized boolean settleNow() {
            if (!keeping) {
                return false;
            }
            keeping = false;
            settled();
            return true;
        }

        /** Holds a settling place now: its working slot and its held place go to the next messages. */
        private synchronized void settled() {
            settle = true;
            working = false;
            Poller.this.working.release();
            slot = false;
            slots.release();
        }

        void end() {
            boolean heldWorking;
            boolean heldPlace;
            boolean heldSlot;
            // Read under this job's lock, released outside it: handing the place on takes another job's lock.
            synchronized (this) {
                keeping = false; // an ended job takes no place handed on
                heldWorking = working;
                heldPlace = settle;
                heldSlot = slot;
            }
            if (heldWorking) {
                Poller.this.working.release();
            }
            if (heldPlace) {
                placeFreed();
            }
            if (heldSlot) {
                slots.release();
            }
        }
    }

    /**
     * Makes a message received during shutdown visible again at once, so another worker can take it. The call is made
     * with the thread's interrupt set aside (stop() may have interrupted the receiver after its last receive): the SDK
     * starts no call from an interrupted thread.
     */
    private void release(InboundMessage m) {
        boolean interrupted = Thread.interrupted();
        try {
            source.changeVisibility(m, Duration.ZERO);
        } catch (RuntimeException e) {
            LOG.debugf("Could not release message %s; it reappears after its visibility timeout", m.messageId());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void pause(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops receiving, then waits up to {@code shutdown-grace} for running handlers. Attempts still
     * running after that are given back: recorded ABANDONED (a shutdown is the worker's doing, not
     * the job's, so it counts toward no limit) and made visible again at once for another worker (after twice the
     * visibility timeout, or the rest of the shutdown if longer, when its handler ignores the interrupt and still runs).
     */
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        long receiverDeadline = System.nanoTime() + settings.receiveWait().plus(RECEIVE_MARGIN).toNanos();
        // Prefetched messages waiting for a slot stop waiting: each is given back as the worker is stopping.
        working.close();
        // A suspect waiting for the lane stops at the end of its copy's current hiding rather than hiding it again.
        lane.waitOn(false);
        synchronized (receiveCall) {
            // A receiver waiting for slots or pausing stops at once; one inside a long poll finishes it and gives back what
            // it brings (the deployment's grace period covers the shutdown grace plus one long poll).
            if (!inReceive) {
                receiver.interrupt();
            }
        }
        workers.shutdown();
        try {
            if (!workers.awaitTermination(settings.shutdownGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                int abandoned = processor.abandonRunning();
                LOG.warnf("%d attempts still running after the shutdown grace; given back uncounted", abandoned);
                if (!workers.awaitTermination(ABANDON_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warnf("%d jobs could not record their release in time; they redeliver when their lease runs out",
                            metrics.inFlight().get());
                }
            }
            // The SQS client must outlive the last receive, or the messages it brings would stay invisible.
            receiver.join(Duration.ofNanos(Math.max(0, receiverDeadline - System.nanoTime())));
            if (receiver.isAlive()) {
                LOG.warnf("The last ReceiveMessage did not answer within the long poll; what it brings reappears after its visibility timeout");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        source.flush();
        LOG.info("Polling stopped");
    }
}

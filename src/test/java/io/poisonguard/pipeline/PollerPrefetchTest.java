package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.observability.Metrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prefetch: the poller holds up to {@code consumer.prefetch} messages beyond its slots, so a freed slot starts its
 * next job without a receive round trip; one that waits half its visibility for a slot goes back unstarted.
 */
class PollerPrefetchTest {
    private Poller poller;

    @AfterEach
    void stop() {
        if (poller != null) {
            poller.stop();
        }
    }

    /** A queue that hands out the messages it was given, and records what it was asked to do with them. */
    static class Backlog implements SourceQueue {
        final ConcurrentLinkedQueue<InboundMessage> waiting = new ConcurrentLinkedQueue<>();
        final List<Integer> asked = Collections.synchronizedList(new ArrayList<>());
        final List<String> givenBack = Collections.synchronizedList(new ArrayList<>());

        Backlog(int messages) {
            for (int i = 0; i < messages; i++) {
                waiting.add(new InboundMessage("m" + i, "rh" + i, "{}", Map.of(), Instant.now(), 1, Instant.now()));
            }
        }

        @Override
        public List<InboundMessage> receive(int max, Duration wait, Duration visibility) {
            asked.add(max);
            List<InboundMessage> out = new ArrayList<>();
            for (InboundMessage m; out.size() < max && (m = waiting.poll()) != null; ) {
                out.add(m);
            }
            if (out.isEmpty()) {
                try {
                    Thread.sleep(wait.toMillis()); // an empty long poll
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted");
                }
            }
            return out;
        }

        @Override
        public void delete(InboundMessage message) {
        }

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            if (delay.isZero()) {
                givenBack.add(message.messageId());
            }
        }

        @Override
        public void flush() {
        }
    }

    /** Records each message it starts; the first one started holds its slot until {@code firstMayEnd} opens. */
    static JobProcessor firstHeldUntil(SourceQueue source, CountDownLatch firstMayEnd, List<String> started) {
        return processor(source, m -> {
            started.add(m.messageId());
            if (started.size() == 1) {
                try {
                    firstMayEnd.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    /** Processes by handing each message to {@code onMessage} once its turn has come (see {@link #processor(SourceQueue, List, java.util.function.Consumer)}). */
    static JobProcessor processor(SourceQueue source, java.util.function.Consumer<InboundMessage> onMessage) {
        return processor(source, Collections.synchronizedList(new ArrayList<>()), onMessage);
    }

    /**
     * As {@link JobProcessor} sequences a job: its intake (recorded in {@code intakes}), then its turn, then its
     * handler ({@code onMessage}), which keeps its slot to the end. A turn refused after the intake gives the copy
     * back at once, as {@link OutcomeStage#giveBack} does.
     */
    static JobProcessor processor(SourceQueue source, List<String> intakes, java.util.function.Consumer<InboundMessage> onMessage) {
        return new JobProcessor(null, null, null) {
            @Override
            public void process(InboundMessage m, Turn turn) {
                intakes.add(m.messageId());
                if (turn.start().isPresent()) {
                    source.changeVisibility(m, Duration.ZERO);
                    return;
                }
                onMessage.accept(m);
            }
        };
    }

    private Poller start(PoisonGuardConfig config, SourceQueue source, JobProcessor processor) {
        return start(config, source, processor, new java.util.concurrent.atomic.AtomicReference<>(ConsumptionGate.Admit.OPEN));
    }

    /** Starts a poller whose consumption gate says what {@code admit} holds. */
    private Poller start(PoisonGuardConfig config, SourceQueue source, JobProcessor processor,
                         java.util.concurrent.atomic.AtomicReference<ConsumptionGate.Admit> admit) {
        ConsumptionGate gate = new ConsumptionGate(null, config, null, null) {
            @Override
            public Admit admit() {
                return admit.get();
            }
        };
        poller = new Poller(source, processor, new Metrics(new SimpleMeterRegistry()), config, gate, new IsolationLane(config));
        poller.start();
        return poller;
    }

    @Test
    void unsetPrefetchStartsAtTheConcurrencyAndAQuarterAtMostTen() {
        assertEquals(1, Poller.reserve(Configs.defaults().set("poison-guard.consumer.concurrency", "1").build().consumer()).size());
        assertEquals(5, Poller.reserve(Configs.defaults().set("poison-guard.consumer.concurrency", "4").build().consumer()).size());
        assertEquals(10, Poller.reserve(Configs.defaults().set("poison-guard.consumer.concurrency", "8").build().consumer()).size());
        assertEquals(10, Poller.reserve(Configs.defaults().set("poison-guard.consumer.concurrency", "32").build().consumer()).size());
        assertEquals(0, Poller.reserve(Configs.defaults().set("poison-guard.consumer.concurrency", "32")
                .set("poison-guard.consumer.prefetch", "0").build().consumer()).size());
    }

    @Test
    void aReceiveWaitsForFourFifthsOfThePrefetchOrAQuarterOfTheConcurrencyAtMostMaxMessages() {
        assertEquals(8, Poller.fill(8, 10, 10));
        assertEquals(8, Poller.fill(32, 10, 10));
        assertEquals(4, Poller.fill(4, 5, 10));
        assertEquals(1, Poller.fill(1, 1, 10));
        assertEquals(8, Poller.fill(32, 1, 10), "a small explicit prefetch does not make one-message receives");
        assertEquals(2, Poller.fill(8, 0, 10));
        assertEquals(3, Poller.fill(8, 10, 3));
    }

    @Test
    void underABacklogEveryReceiveRefillsMostOfTheReserveAtLowConcurrency() throws Exception {
        // Concurrency 8, prefetch unset (10): with jobs ending one by one, each receive waits until it can bring
        // the reserve back (8 free slots) instead of reading the two or three that happen to be free.
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "8")
                .set("poison-guard.consumer.receive-linger", "10s").set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(400);
        java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
        start(config, queue, processor(queue, m -> {
            try {
                Thread.sleep(1); // a short job, so slots free one by one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            done.incrementAndGet();
        }));
        await().atMost(Duration.ofSeconds(30)).until(() -> done.get() == 400);
        List<Integer> asked;
        synchronized (queue.asked) {
            asked = List.copyOf(queue.asked);
        }
        assertTrue(asked.stream().allMatch(n -> n >= 8), "every receive asked for at least 8: " + asked);
        assertTrue(asked.size() <= 400 / 8 + 2, "400 messages took " + asked.size() + " receives");
    }

    /**
     * Runs {@code jobs} messages at concurrency 8 with the prefetch unset, each receive taking {@code roundTrip},
     * each intake {@code intake} and each handler {@code handler}; returns the most messages the worker held at
     * once (received and not yet ended).
     */
    private int mostHeldAtOnce(int jobs, Duration roundTrip, Duration intake, Duration handler) {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "8")
                .set("poison-guard.consumer.receive-wait", "1s").build();
        java.util.concurrent.atomic.AtomicInteger held = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger ended = new java.util.concurrent.atomic.AtomicInteger();
        Backlog queue = new Backlog(jobs) {
            @Override
            public List<InboundMessage> receive(int max, Duration wait, Duration visibility) {
                pause(roundTrip);
                List<InboundMessage> out = super.receive(max, wait, visibility);
                most.accumulateAndGet(held.addAndGet(out.size()), Math::max);
                return out;
            }
        };
        start(config, queue, new JobProcessor(null, null, null) {
            @Override
            public void process(InboundMessage m, Turn turn) {
                pause(intake);
                if (turn.start().isEmpty()) {
                    pause(handler);
                    turn.handlerReturned();
                }
                held.decrementAndGet();
                ended.incrementAndGet();
            }
        });
        await().atMost(Duration.ofSeconds(60)).until(() -> ended.get() == jobs);
        assertTrue(queue.givenBack.isEmpty(), "nothing was given back: " + queue.givenBack);
        return most.get();
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d); // stands for a round trip or a handler's work, not for a condition
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void anUnsetPrefetchGrowsPastTheDefaultWhenJobsEndFasterThanAReceiveAndItsIntakesRefillThem() {
        // Handlers of 4 ms at concurrency 8 spend a job every half millisecond; a receive and its intakes take 9 ms,
        // during which the handlers spend 18 jobs, more than the default reserve of 10. The reserve grows (up to 40),
        // so the worker comes to hold more than the concurrency plus 10.
        int most = mostHeldAtOnce(1500, Duration.ofMillis(3), Duration.ofMillis(6), Duration.ofMillis(4));
        assertTrue(most > 18, "held at most " + most + " messages at once");
    }

    @Test
    void anUnsetPrefetchStaysAtTheDefaultWhenJobsAreSlowAgainstAReceiveAndItsIntakes() {
        // Handlers of 60 ms against a 2-ms refill: a larger reserve would only make the prefetched copies wait longer.
        int most = mostHeldAtOnce(120, Duration.ofMillis(1), Duration.ofMillis(1), Duration.ofMillis(60));
        // The concurrency plus the default 10 is 18; on a loaded machine a refill timed slow can add a copy or two (19 seen
        // once here, with other tests' JVMs busy). What this guards against is growth toward the ceiling of 40.
        assertTrue(most <= 22, "held at most " + most + " messages at once");
    }

    @Test
    void aSlotThatFreesStartsAPrefetchedMessageWithoutAnotherReceive() throws Exception {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "1")
                .set("poison-guard.consumer.prefetch", "1").set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(2);
        CountDownLatch firstMayEnd = new CountDownLatch(1);
        List<String> started = Collections.synchronizedList(new ArrayList<>());
        // Whichever of the two takes the slot first holds it until the test lets it go.
        start(config, queue, firstHeldUntil(queue, firstMayEnd, started));
        // One receive asked for the slot and the prefetch together: both messages are in the worker, one started.
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.waiting.isEmpty() && !started.isEmpty());
        assertEquals(2, queue.asked.get(0));
        assertEquals(1, started.size(), "the prefetched message waits for the slot: " + started);
        int receivesBefore = queue.asked.size();
        firstMayEnd.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> started.size() == 2);
        assertEquals(java.util.Set.of("m0", "m1"), java.util.Set.copyOf(started));
        assertTrue(queue.asked.size() <= receivesBefore + 1, "the prefetched message started without waiting for a receive");
        assertTrue(queue.givenBack.isEmpty(), "nothing was given back: " + queue.givenBack);
    }

    /**
     * SQS as the SDK's client behaves under an interrupt: the long poll's socket read does not notice it, and the
     * answer of a thread interrupted meanwhile is thrown away after it arrived (the messages in it stay invisible
     * for their visibility timeout); no call starts from an interrupted thread.
     */
    static final class LongPollQueue extends Backlog {
        final CountDownLatch polling = new CountDownLatch(1);
        final CountDownLatch answer = new CountDownLatch(1);
        final List<String> thrownAway = Collections.synchronizedList(new ArrayList<>());

        LongPollQueue() {
            super(0);
        }

        @Override
        public List<InboundMessage> receive(int max, Duration wait, Duration visibility) {
            polling.countDown();
            boolean interrupted = false;
            while (true) {
                try {
                    answer.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // a socket read goes on
                }
            }
            InboundMessage m = new InboundMessage("late", "rh-late", "{}", Map.of(), Instant.now(), 1, Instant.now());
            if (interrupted || Thread.currentThread().isInterrupted()) {
                Thread.currentThread().interrupt();
                thrownAway.add(m.messageId());
                throw new IllegalStateException("Thread was interrupted"); // as the SDK's AbortedException
            }
            return List.of(m);
        }

        @Override
        public void changeVisibility(InboundMessage message, Duration delay) {
            if (Thread.currentThread().isInterrupted()) {
                throw new IllegalStateException("Thread was interrupted");
            }
            super.changeVisibility(message, delay);
        }
    }

    @Test
    void aMessageTheLastLongPollBringsDuringShutdownIsGivenBackAtOnce() throws Exception {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "2")
                .set("poison-guard.consumer.receive-wait", "2s").set("poison-guard.consumer.shutdown-grace", "1s").build();
        LongPollQueue queue = new LongPollQueue();
        start(config, queue, processor(queue, m -> { }));
        queue.polling.await();
        Thread stopping = Thread.ofVirtual().start(poller::stop);
        // A message arrives while the worker stops, within the long poll it had open.
        await().atMost(Duration.ofSeconds(5)).until(() -> !poller.isRunning());
        queue.answer.countDown();
        stopping.join(Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(5)).until(() -> !queue.givenBack.isEmpty() || !queue.thrownAway.isEmpty());
        assertEquals(List.of(), queue.thrownAway, "the long poll's answer was thrown away: its message waits out its visibility");
        assertEquals(List.of("late"), queue.givenBack);
        assertTrue(!stopping.isAlive(), "stop() returned once the long poll had answered");
    }

    @Test
    void aReceiverKilledByAnErrorIsReportedSoTheWorkerIsReplacedInsteadOfIdlingHealthy() {
        // An Error (not an exception) out of a consumption check ends the receiver thread: the worker would go on saying it
        // polls and receive nothing, its liveness UP.
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.receive-wait", "1s").build();
        ConsumptionGate broken = new ConsumptionGate(null, config, null, null) {
            @Override
            public Admit admit() {
                throw new NoClassDefFoundError("io/smallrye/faulttolerance/core/Missing");
            }
        };
        poller = new Poller(new Backlog(1), processor(new Backlog(0), m -> { }), new Metrics(new SimpleMeterRegistry()), config, broken,
                new IsolationLane(config));
        assertTrue(poller.receiverDown().isEmpty(), "not started: nothing to report");
        poller.start();

        await().atMost(Duration.ofSeconds(5)).until(() -> poller.receiverDown().isPresent());
        assertTrue(poller.receiverDown().get().contains("NoClassDefFoundError"), poller.receiverDown().get());
    }

    @Test
    void aPrefetchedMessageWhoseTurnComesWhileConsumptionIsPausedGoesBackUnstarted() throws Exception {
        // A dependency's breaker opens while a job runs and another waits, prefetched: when the slot frees, the
        // waiting one must not start an attempt the outage would charge; it goes back for later (or another worker).
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "1")
                .set("poison-guard.consumer.prefetch", "1").set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(2);
        CountDownLatch firstMayEnd = new CountDownLatch(1);
        List<String> started = Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicReference<ConsumptionGate.Admit> admit =
                new java.util.concurrent.atomic.AtomicReference<>(ConsumptionGate.Admit.OPEN);
        start(config, queue, firstHeldUntil(queue, firstMayEnd, started), admit);
        await().atMost(Duration.ofSeconds(10)).until(() -> started.size() == 1 && queue.waiting.isEmpty());
        admit.set(ConsumptionGate.Admit.PAUSED);
        firstMayEnd.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> !queue.givenBack.isEmpty() || started.size() > 1);
        assertEquals(1, started.size(), "nothing started while consumption was paused: " + started);
        assertEquals(1, queue.givenBack.size());
        assertTrue(!started.contains(queue.givenBack.get(0)), "given back: " + queue.givenBack + ", started: " + started);
    }

    @Test
    void jobsLongerThanHalfTheVisibilityAreNotPrefetchedOnlyToBeGivenBack() {
        // Concurrency 1, jobs of 1.5 s against a visibility of 2 s: a message held for the next slot waits 1.5 s, past the
        // second it may, and goes back unstarted (a receive, two ledger writes and a redrive count spent for nothing).
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "1")
                .set("poison-guard.consumer.visibility-timeout", "2s").set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(20);
        List<String> started = Collections.synchronizedList(new ArrayList<>());
        start(config, queue, new JobProcessor(null, null, null) {
            @Override
            public void process(InboundMessage m, Turn turn) {
                if (turn.start().isPresent()) {
                    queue.changeVisibility(m, Duration.ZERO);
                    return;
                }
                started.add(m.messageId());
                try {
                    Thread.sleep(1500); // the job's own work: what makes it slow
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                turn.handlerReturned();
            }
        });

        await().atMost(Duration.ofSeconds(30)).until(() -> started.size() >= 6);
        // Only copies taken in before the first job's time was known (and its held place was given up) may have gone back;
        // with a reserve held throughout, one went back about every second (six or more by now).
        assertTrue(queue.givenBack.size() <= 2, "given back unstarted: " + queue.givenBack + ", started: " + started);
    }

    @Test
    void aPrefetchedMessageThatWaitsHalfItsVisibilityGoesBackUnstarted() throws Exception {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "1")
                .set("poison-guard.consumer.prefetch", "1").set("poison-guard.consumer.visibility-timeout", "2s")
                .set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(2);
        CountDownLatch firstMayEnd = new CountDownLatch(1);
        List<String> started = Collections.synchronizedList(new ArrayList<>());
        start(config, queue, processor(queue, m -> {
            started.add(m.messageId());
            try {
                firstMayEnd.await(); // a long job: holds the only slot past the prefetched message's half visibility
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        // Whichever took the slot first holds it; the other, prefetched, goes back after a second (half of 2 s).
        await().atMost(Duration.ofSeconds(10)).until(() -> !queue.givenBack.isEmpty());
        assertEquals(1, started.size(), "the prefetched message was not started late: " + started);
        assertEquals(1, queue.givenBack.size());
        assertTrue(!started.contains(queue.givenBack.get(0)), "given back: " + queue.givenBack + ", started: " + started);
        firstMayEnd.countDown();
        // Its slot is free again for what comes next: the poller goes on receiving.
        int receives = queue.asked.size();
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.asked.size() > receives);
    }

    /**
     * A processor whose handlers return at once and whose outcomes are then held until the message's latch
     * ({@code mayEnd}, by message id) opens: each message is recorded in {@code started} when it starts, in
     * {@code settling} once its handler has returned, and in {@code ended} when it is done.
     */
    static JobProcessor outcomesHeldUntil(java.util.function.Function<String, CountDownLatch> mayEnd, List<String> started,
                                          List<String> settling, List<String> ended) {
        return new JobProcessor(null, null, null) {
            @Override
            public void process(InboundMessage m, Turn turn) {
                if (turn.start().isPresent()) {
                    return;
                }
                started.add(m.messageId());
                turn.handlerReturned();
                settling.add(m.messageId());
                try {
                    mayEnd.apply(m.messageId()).await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ended.add(m.messageId());
            }
        };
    }

    @Test
    void aJobWhoseHandlerReturnedLeavesItsSlotToTheNextWhileItsOutcomeIsRecorded() {
        // Concurrency 1, prefetch 1: the slot bounds handlers, not outcome writes. While the first two jobs' outcomes
        // are still being written (as many outcomes as the worker may hold messages, two), the next jobs start; the
        // third finds both places taken and keeps its slot while its own outcome waits, so the fourth does not start.
        CountDownLatch outcomesMayEnd = new CountDownLatch(1);
        Outcomes o = oneSlotFourJobs(id -> outcomesMayEnd);
        Backlog queue = o.queue();
        List<String> started = o.started();
        List<String> settling = o.settling();
        List<String> ended = o.ended();
        await().atMost(Duration.ofSeconds(10)).until(() -> settling.size() == 3);
        assertEquals(3, started.size(), "the second and third jobs started while the outcomes before them were being written: " + started);
        assertTrue(ended.isEmpty(), "no outcome was let through yet: " + ended);
        // The fourth is received (the second's held place went back to the poller) but finds no slot: it does not
        // start while the third, unable to settle beside the first two, keeps the only slot.
        await().atMost(Duration.ofSeconds(10)).until(queue.waiting::isEmpty);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> started.size() == 3);
        outcomesMayEnd.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> ended.size() == 4);
        assertEquals(java.util.Set.of("m0", "m1", "m2", "m3"), java.util.Set.copyOf(ended));
        assertTrue(queue.givenBack.isEmpty(), "nothing was given back: " + queue.givenBack);
    }

    @Test
    void aJobThatFoundNoSettlingPlaceHandsItsSlotOnAsSoonAsAPlaceFreesNotAfterItsOwnOutcome() {
        // Concurrency 1, prefetch 1: two settling places. m0 and m1 settle; m2 finds both taken and keeps the slot while
        // its outcome is written. m0's outcome ends first: its place goes to m2 at once, and m2's slot to m3, while the
        // outcomes of m1 and m2 are still being written. (Kept to the end of its own outcome, the slot idled for
        // an outcome's round trips, and at concurrency 8 that bounded the worker: BENCHMARKS.md, thirty-third table.)
        Map<String, CountDownLatch> mayEnd = new java.util.concurrent.ConcurrentHashMap<>();
        for (int i = 0; i < 4; i++) {
            mayEnd.put("m" + i, new CountDownLatch(1));
        }
        Outcomes o = oneSlotFourJobs(mayEnd::get);
        await().atMost(Duration.ofSeconds(10)).until(() -> o.settling().size() == 3);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> o.started().size() == 3);
        mayEnd.get("m0").countDown();
        await().atMost(Duration.ofSeconds(5)).until(() -> o.started().size() == 4);
        assertEquals(List.of("m0"), List.copyOf(o.ended()), "m3 started while the outcomes of m1 and m2 were still being written");
        mayEnd.values().forEach(CountDownLatch::countDown);
        await().atMost(Duration.ofSeconds(10)).until(() -> o.ended().size() == 4);
        assertTrue(o.queue().givenBack.isEmpty(), "nothing was given back: " + o.queue().givenBack);
    }

    /** A started poller's queue, and its messages as they start, settle and end. */
    record Outcomes(Backlog queue, List<String> started, List<String> settling, List<String> ended) {
    }

    /**
     * Concurrency 1 and prefetch 1 (so two settling places), four messages, each one's outcome held until its latch
     * ({@code mayEnd}, by message id) opens.
     */
    private Outcomes oneSlotFourJobs(java.util.function.Function<String, CountDownLatch> mayEnd) {
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "1")
                .set("poison-guard.consumer.prefetch", "1").set("poison-guard.consumer.receive-wait", "1s").build();
        Outcomes o = new Outcomes(new Backlog(4), Collections.synchronizedList(new ArrayList<>()),
                Collections.synchronizedList(new ArrayList<>()), Collections.synchronizedList(new ArrayList<>()));
        start(config, o.queue(), outcomesHeldUntil(mayEnd, o.started(), o.settling(), o.ended()));
        return o;
    }

    @Test
    void underChurnNoSlotOrSettlingPlaceIsLostOrOverdrawn() {
        // Concurrency 2, prefetch 2: outcomes of random length, so returning handlers often find every settling place
        // taken and places are handed from ending jobs to keepers. Never more than two handlers at once, never more
        // than 2 x (concurrency + reserve) messages unfinished, every message ends, and (no slot or place leaked) a
        // second backlog after the first drains as well.
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "2")
                .set("poison-guard.consumer.prefetch", "2").set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(1500);
        java.util.concurrent.atomic.AtomicInteger handlers = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger unfinished = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger mostHandlers = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger mostUnfinished = new java.util.concurrent.atomic.AtomicInteger();
        java.util.Set<String> ended = java.util.concurrent.ConcurrentHashMap.newKeySet();
        start(config, queue, new JobProcessor(null, null, null) {
            @Override
            public void process(InboundMessage m, Turn turn) {
                mostUnfinished.accumulateAndGet(unfinished.incrementAndGet(), Math::max);
                try {
                    if (turn.start().isPresent()) {
                        return;
                    }
                    mostHandlers.accumulateAndGet(handlers.incrementAndGet(), Math::max);
                    java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.ThreadLocalRandom.current().nextLong(300_000));
                    handlers.decrementAndGet();
                    turn.handlerReturned();
                    // The outcome's round trips: 0-2 ms.
                    java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.ThreadLocalRandom.current().nextLong(2_000_000));
                    ended.add(m.messageId());
                } finally {
                    unfinished.decrementAndGet();
                }
            }
        });
        await().atMost(Duration.ofSeconds(60)).until(() -> ended.size() == 1500);
        for (int i = 1500; i < 1600; i++) {
            queue.waiting.add(new InboundMessage("m" + i, "rh" + i, "{}", Map.of(), Instant.now(), 1, Instant.now()));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> ended.size() == 1600);
        assertTrue(mostHandlers.get() <= 2, "handlers at once: " + mostHandlers.get());
        assertTrue(mostUnfinished.get() <= 2 * (2 + 2), "messages unfinished at once: " + mostUnfinished.get());
        assertTrue(queue.givenBack.isEmpty(), "nothing was given back: " + queue.givenBack.size());
    }

    @Test
    void everyPrefetchedJobMakesItsAttemptDurableWhileTheHandlersRunAndStartsWhenASlotFrees() {
        // Concurrency 2, prefetch 3: two handlers hold both slots. The three prefetched jobs take their intake
        // meanwhile, all of them, so no ledger write is left to be paid after a slot frees, and wait for a slot.
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "2")
                .set("poison-guard.consumer.prefetch", "3").set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(5);
        CountDownLatch handlersMayEnd = new CountDownLatch(1);
        List<String> intakes = Collections.synchronizedList(new ArrayList<>());
        List<String> started = Collections.synchronizedList(new ArrayList<>());
        List<String> ended = Collections.synchronizedList(new ArrayList<>());
        start(config, queue, processor(queue, intakes, m -> {
            started.add(m.messageId());
            try {
                handlersMayEnd.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ended.add(m.messageId());
        }));
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.waiting.isEmpty() && started.size() == 2 && intakes.size() == 5);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> started.size() == 2);
        handlersMayEnd.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> ended.size() == 5);
        assertEquals(java.util.Set.of("m0", "m1", "m2", "m3", "m4"), java.util.Set.copyOf(ended));
        assertEquals(5, intakes.size(), "each job took its intake once: " + intakes);
        assertTrue(queue.givenBack.isEmpty(), "nothing was given back: " + queue.givenBack);
    }

    @Test
    void aJobWhoseSlotDoesNotFreeInTimeAfterItsIntakeIsGivenBackUnstarted() {
        // Its attempt is already durable: the turn tells the processor why it may not start, and the processor gives
        // the copy back (OutcomeStage.giveBack records the attempt ABANDONED, uncounted).
        PoisonGuardConfig config = Configs.defaults().set("poison-guard.consumer.concurrency", "1")
                .set("poison-guard.consumer.prefetch", "1").set("poison-guard.consumer.visibility-timeout", "2s")
                .set("poison-guard.consumer.receive-wait", "1s").build();
        Backlog queue = new Backlog(2);
        CountDownLatch firstMayEnd = new CountDownLatch(1);
        List<String> intakes = Collections.synchronizedList(new ArrayList<>());
        List<String> started = Collections.synchronizedList(new ArrayList<>());
        start(config, queue, processor(queue, intakes, m -> {
            started.add(m.messageId());
            try {
                firstMayEnd.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        await().atMost(Duration.ofSeconds(10)).until(() -> !queue.givenBack.isEmpty());
        assertEquals(2, intakes.size(), "the second job took its intake while the first ran: " + intakes);
        assertEquals(1, started.size(), "it did not start late: " + started);
        assertTrue(!started.contains(queue.givenBack.get(0)), "given back: " + queue.givenBack + ", started: " + started);
        firstMayEnd.countDown();
    }

    @Test
    void aHandlerCutOffAtItsDeadlineKeepsItsSlotUntilItsJobEnds() {
        // A handler that ran past its deadline may still be running after its outcome is decided: its slot is not
        // handed on early, so no more than the concurrency of handlers ever run at once.
        AttemptStage.Attempted timedOut = new AttemptStage.Attempted(null, null, null, new AttemptResult.TimedOut(Duration.ofSeconds(1)),
                null, null, 0, Duration.ZERO);
        AttemptStage.Attempted abandoned = new AttemptStage.Attempted(null, null, null, new AttemptResult.Abandoned(), null, null, 0, Duration.ZERO);
        AttemptStage.Attempted succeeded = new AttemptStage.Attempted(null, null, null, new AttemptResult.Succeeded(), null, null, 0, Duration.ZERO);
        AttemptStage.Attempted crashed = new AttemptStage.Attempted(null, null, null, new AttemptResult.Crashed("OutOfMemoryError"), null, null, 0,
                Duration.ZERO);
        assertTrue(!timedOut.handlerReturned() && !abandoned.handlerReturned(), "a handler cut off may still be running");
        assertTrue(succeeded.handlerReturned() && crashed.handlerReturned(), "a handler that returned or threw has ended");
    }
}

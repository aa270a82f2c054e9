package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.AdmissionLimits;
import io.poisonguard.admission.InboundMessage;
import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.Preflight;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.Settings;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Intake;
import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import io.poisonguard.testing.RecordingDynamo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The intake stage on its own, against the ledger on the emulator: what it does with a second copy of a job this
 * worker already holds, and with a ledger that does not answer the read a redelivered copy starts with.
 */
class IntakeStageTest {
    static RecordingDynamo dynamo;

    @BeforeAll
    static void tables() {
        dynamo = RecordingDynamo.onFreshTables("is");
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    private final PoisonGuardConfig config = Configs.defaults().build();
    private final Decisions decisions = new Decisions(Settings.policy(config));
    private final GiveBackTest.Visibility source = new GiveBackTest.Visibility();
    private final Metrics metrics = new Metrics(new SimpleMeterRegistry());

    private IntakeStage intake(LedgerStore ledger, Clock clock, LedgerGate gate) {
        return intake(config, ledger, clock, gate);
    }

    private IntakeStage intake(PoisonGuardConfig config, LedgerStore ledger, Clock clock, LedgerGate gate) {
        Decisions decisions = new Decisions(Settings.policy(config));
        SplittableRandom random = new SplittableRandom(7);
        OutcomeStage outcomes = new OutcomeStage(ledger, source, null, decisions, clock, random, metrics,
                null, null, null, null, gate, null, config, "worker-1");
        Preflight preflight = new Preflight(new AdmissionLimits(64 * 1024, 200, 4, 3),
                jobType -> "permit-report".equals(jobType) ? Optional.of(Set.of(1, 2)) : Optional.empty());
        return new IntakeStage(ledger, source, null, preflight, decisions, clock, random, metrics, "worker-1", null,
                new IsolationLane(config), outcomes, null, gate, config);
    }

    private static InboundMessage copy(String jobId, String messageId, int receiveCount, Instant at) {
        return new InboundMessage(messageId, "rh-" + messageId, "{\"permitId\":\"P-1\",\"site\":\"North Yard\"}",
                Map.of(WireAttributes.JOB_ID, MessageAttribute.string(jobId), WireAttributes.TENANT, MessageAttribute.string("acme"),
                        WireAttributes.JOB_TYPE, MessageAttribute.string("permit-report"), WireAttributes.SCHEMA_VERSION, MessageAttribute.number(2)),
                at, receiveCount, at);
    }

    /**
     * A producer's duplicate (or SQS's) in the same receive as the original: both copies were admitted in the same
     * millisecond with the same count of other jobs in flight, so both built the same started attempt; the second's
     * conditional create failed, found exactly what it meant to write, took it for its own resent write and ran the
     * job a second time beside the first. A worker now holds one copy of a job at a time; the other waits.
     */
    @Test
    void aSecondCopyOfAJobThisWorkerHoldsWaitsInsteadOfRunningBesideTheFirst() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Clock clock = Clock.fixed(now, ZoneOffset.UTC);
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo.client(), dynamo.names().ledgerTable(), clock);
        IntakeStage intake = intake(ledger, clock, null);
        String job = "dup-" + now.toEpochMilli();

        // Another job is in flight when the original is admitted, and ends before its duplicate is: both copies count
        // one other job in flight.
        IntakeStage.Ticket other = intake.admit(copy("other-" + now.toEpochMilli(), "m-other", 1, now)).orElseThrow();
        IntakeStage.Ticket first = intake.admit(copy(job, "m-1", 1, now)).orElseThrow();
        other.close();
        Optional<IntakeStage.Ticket> second = intake.admit(copy(job, "m-2", 1, now));
        try {
            assertTrue(second.isEmpty(), "the duplicate was admitted to run beside the original");
            assertEquals(1, source.changes.size(), "the duplicate is hidden for a while, not deleted or left visible: " + source.changes);
            assertEquals(JobState.ACTIVE, ledger.findOwn(JobKey.of("acme", job)).orElseThrow().state());
            assertEquals(1, ledger.findOwn(JobKey.of("acme", job)).orElseThrow().attempt(), "one attempt started");
        } finally {
            first.close();
            second.ifPresent(IntakeStage.Ticket::close);
        }
        // Once the original's ticket is closed, a copy of the job is taken in again (here: found running under this
        // worker's live lease, so it waits on the lease).
        Optional<IntakeStage.Ticket> later = intake.admit(copy(job, "m-3", 2, now));
        assertTrue(later.isEmpty());
        assertEquals(2, source.changes.size(), source.changes.toString());
    }

    /** A visibility timeout of 2 s, so half of it (how long a suspect waited for the lane) passes in a test. */
    private static Configs shortVisibility() {
        return Configs.defaults().set("poison-guard.consumer.visibility-timeout", "2s").set("poison-guard.consumer.heartbeat-interval", "1s")
                .set("poison-guard.ledger-gate.probe-interval", "1s");
    }

    /** Writes {@code jobId}'s attempt as a worker that died 10 s ago left it: ACTIVE, its lease run out. A suspect. */
    private static LedgerRecord diedRunning(PoisonGuardConfig config, LedgerStore ledger, String jobId, Instant now) {
        Instant then = now.minusSeconds(10);
        Intake run = new Decisions(Settings.policy(config)).intake(LedgerRecord.fresh(jobId, "acme", "permit-report", 1, then),
                Optional.empty(), 1, then, "worker-9", new Decisions.Lane(false, 3), new SplittableRandom(1));
        return ledger.write(((Intake.Run) run).next());
    }

    /**
     * Writes {@code jobId} as a suspect whose crash is recorded and whose retry delay has passed: its attempt died 10 s ago,
     * another worker recorded the crash 5 s ago with a 1-s delay. It runs next, alone.
     */
    private static LedgerRecord crashedAndDue(PoisonGuardConfig config, LedgerStore ledger, String jobId, Instant now) {
        LedgerRecord died = diedRunning(config, ledger, jobId, now);
        Intake crash = new Decisions(Settings.policy(config)).intake(died, Optional.empty(), 1, now.minusSeconds(5), "worker-8",
                new Decisions.Lane(false, 3), new SplittableRandom(1));
        return ledger.write(((Intake.Decided) crash).disposition().next());
    }

    /** {@link #shortVisibility()} with an ambiguous crash's delay fixed at 1 s, so a crash recorded 5 s ago is due. */
    private static PoisonGuardConfig crashDueSoon() {
        return shortVisibility().set("poison-guard.failure.crash-ambiguous.base", "1s").set("poison-guard.failure.crash-ambiguous.cap", "1s")
                .set("poison-guard.failure.crash-ambiguous.jitter", "NONE").build();
    }

    /**
     * An intake stage on the emulator's ledger whose lane another job holds, on a thread of its own (lane locks belong to
     * the thread that took them), until {@link #free()} or close. Copies are admitted on threads of their own too.
     */
    private final class BusyLane implements AutoCloseable {
        final PoisonGuardConfig config;
        final Clock clock = Clock.systemUTC();
        final DynamoLedgerStore ledger;
        final IntakeStage intake;
        final Instant now;
        private final ExecutorService threads = Executors.newCachedThreadPool();
        private final CountDownLatch release = new CountDownLatch(1);
        private final java.util.concurrent.Future<?> holder;

        BusyLane(PoisonGuardConfig config) throws InterruptedException {
            this.config = config;
            this.ledger = new DynamoLedgerStore(dynamo.client(), dynamo.names().ledgerTable(), clock);
            this.intake = intake(config, ledger, clock, null);
            this.now = clock.instant();
            CountDownLatch inLane = new CountDownLatch(1);
            holder = threads.submit(() -> {
                try (IntakeStage.Ticket held = intake.admit(copy("busy-" + java.util.UUID.randomUUID(), "m-busy", 1, now)).orElseThrow()) {
                    inLane.countDown();
                    release.await();
                }
                return null;
            });
            assertTrue(inLane.await(10, TimeUnit.SECONDS), "the busy job got into the lane");
        }

        /** Admits {@code m} on a thread of its own; a ticket it got is closed there (its thread holds the lane), its attempt kept. */
        java.util.concurrent.Future<Optional<LedgerRecord>> admit(InboundMessage m) {
            return threads.submit(() -> intake.admit(m).map(ticket -> {
                ticket.close();
                return ticket.started();
            }));
        }

        /** The busy job leaves the lane. */
        void free() throws Exception {
            release.countDown();
            holder.get(10, TimeUnit.SECONDS);
        }

        /** How many times a copy was hidden again for a whole visibility timeout (a suspect waiting on). */
        long rehidden() {
            return source.changes.stream().filter(config.consumer().visibilityTimeout()::equals).count();
        }

        @Override
        public void close() {
            release.countDown();
            threads.shutdownNow();
        }
    }

    /**
     * A suspect (its last attempt's lease ran out) runs alone, so it waits for the jobs in the lane to finish. It waited
     * at most half its visibility: behind jobs that run longer it gave its copy back, again on every receive, and never
     * ran while the queue was busy. It now waits on, keeping its copy hidden, until the jobs in flight have finished.
     */
    @Test
    void aSuspectBehindJobsLongerThanHalfItsVisibilityWaitsOnWithItsCopyHiddenThenRunsAlone() throws Exception {
        try (BusyLane lane = new BusyLane(crashDueSoon())) {
            String suspect = "suspect-" + lane.now.toEpochMilli();
            crashedAndDue(lane.config, lane.ledger, suspect, lane.now);
            var suspectIn = lane.admit(copy(suspect, "m-suspect", 2, lane.clock.instant()));

            // The busy job outlasts two of the suspect's half-visibilities: its copy is hidden again each time, never given up.
            await().atMost(Duration.ofSeconds(10)).until(() -> lane.rehidden() >= 2);
            assertFalse(suspectIn.isDone(), "the suspect gave up on the lane while its copy was still its own");
            lane.free();

            LedgerRecord started = suspectIn.get(10, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("the suspect never ran"));
            assertTrue(started.currentEntry().isolated(), "it runs alone, so a crash of its own is its own");
            assertEquals("worker-1", lane.ledger.findOwn(JobKey.of("acme", suspect)).orElseThrow().leaseOwner());
        }
    }

    /**
     * A parked job's record can still read as a suspect (its last attempt crashed): its copy is only forwarded to the DLQ,
     * never run, so it waits for a busy lane no longer than an ordinary copy does, nor hides itself again, nor marks the
     * record. (Waiting out the lane's drain for it would pause the worker's intake for nothing.)
     */
    @Test
    void aCopyOfAParkedJobWhoseLastAttemptCrashedDoesNotWaitLongForTheLane() throws Exception {
        try (BusyLane lane = new BusyLane(crashDueSoon())) {
            String parked = "parked-crashed-" + lane.now.toEpochMilli();
            LedgerRecord crashed = crashedAndDue(lane.config, lane.ledger, parked, lane.now);
            LedgerRecord quarantined = lane.ledger.write(crashed.moveTo(JobState.QUARANTINED, lane.now).withQuarantine(
                    io.poisonguard.failure.FailureClass.CRASH_AMBIGUOUS, "CRASH_AMBIGUOUS limit reached"));
            assertTrue(new Decisions(Settings.policy(lane.config)).needsIsolation(quarantined, lane.now), "the record reads as a suspect");

            Optional<LedgerRecord> turned = lane.admit(copy(parked, "m-parked", 2, lane.clock.instant())).get(10, TimeUnit.SECONDS);

            assertTrue(turned.isEmpty());
            assertEquals(0, lane.rehidden(), "its copy was hidden again to wait on: " + source.changes);
            assertEquals(quarantined.version(), lane.ledger.findOwn(JobKey.of("acme", parked)).orElseThrow().version(), "nothing written");
        }
    }

    /**
     * While a replay of a job whose last attempt crashed is under way (REPLAYING, generation 2), a copy of generation 1
     * waits for the replay to go one way or the other. It runs nothing, so it takes no lane: as a suspect's copy it took
     * the exclusive lane (draining the worker) or, the lane busy, left a turn-away mark on the REPLAYING record, moving it
     * under the replay's own writes (and, every 30 s, keeping a stuck replay from ever looking stale).
     */
    @Test
    void anOlderGenerationsCopyWhileItsSuspectJobIsReplayingTakesNoLaneAndWritesNothing() throws Exception {
        try (BusyLane lane = new BusyLane(crashDueSoon())) {
            String job = "replaying-suspect-" + lane.now.toEpochMilli();
            LedgerRecord crashed = crashedAndDue(lane.config, lane.ledger, job, lane.now);
            LedgerRecord replaying = lane.ledger.write(crashed.moveTo(JobState.QUARANTINED, lane.now)
                    .withQuarantine(io.poisonguard.failure.FailureClass.CRASH_AMBIGUOUS, "CRASH_AMBIGUOUS limit reached")
                    .replayed(lane.now));
            assertTrue(new Decisions(Settings.policy(lane.config)).needsIsolation(replaying, lane.now), "the record reads as a suspect");

            Optional<LedgerRecord> waited = lane.admit(copy(job, "m-older", 3, lane.clock.instant())).get(10, TimeUnit.SECONDS);

            assertTrue(waited.isEmpty());
            assertEquals(replaying.version(), lane.ledger.findOwn(JobKey.of("acme", job)).orElseThrow().version(), "nothing written");
            assertEquals(0, lane.rehidden(), "its copy was hidden again to wait on: " + source.changes);
        }
    }

    /**
     * A suspect's copy that admission rejects (here: a schema version the handler cannot read) only records its rejection:
     * it starts nothing, so it waits for a busy lane no longer than an ordinary copy does.
     */
    @Test
    void aSuspectsCopyThatAdmissionRejectsDoesNotWaitLongForTheLane() throws Exception {
        try (BusyLane lane = new BusyLane(crashDueSoon())) {
            String suspect = "rejected-suspect-" + lane.now.toEpochMilli();
            crashedAndDue(lane.config, lane.ledger, suspect, lane.now);
            InboundMessage unreadable = new InboundMessage("m-unreadable", "rh-unreadable", "{\"permitId\":\"P-1\"}",
                    Map.of(WireAttributes.JOB_ID, MessageAttribute.string(suspect), WireAttributes.TENANT, MessageAttribute.string("acme"),
                            WireAttributes.JOB_TYPE, MessageAttribute.string("permit-report"), WireAttributes.SCHEMA_VERSION, MessageAttribute.number(9)),
                    lane.clock.instant(), 2, lane.clock.instant());

            Optional<LedgerRecord> turned = lane.admit(unreadable).get(10, TimeUnit.SECONDS);

            assertTrue(turned.isEmpty());
            assertEquals(0, lane.rehidden(), "its copy was hidden again to wait on: " + source.changes);
        }
    }

    /**
     * A suspect that still cannot get the lane gives its copy back, and leaves a mark on its record. The dead-letter
     * intake takes a copy SQS moved whose record did not change across three returns for a job that dies before
     * reaching the ledger, and quarantines it REDRIVEN; a suspect turned away on every receive looked just like one.
     */
    @Test
    void aSuspectThatCannotGetTheLaneLeavesAMarkOnItsRecordSoItsReturnsAreNotTakenForAJobThatNeverReachesTheLedger() throws Exception {
        try (BusyLane lane = new BusyLane(shortVisibility().set("poison-guard.attempt.deadline", "1s")
                .set("poison-guard.attempt.stop-grace", "500ms").build())) {
            String suspect = "turned-away-" + lane.now.toEpochMilli();
            LedgerRecord before = diedRunning(lane.config, lane.ledger, suspect, lane.now);

            Optional<LedgerRecord> turnedAway = lane.admit(copy(suspect, "m-away", 2, lane.clock.instant())).get(30, TimeUnit.SECONDS);

            assertTrue(turnedAway.isEmpty(), "the lane never emptied");
            LedgerRecord after = lane.ledger.findOwn(JobKey.of("acme", suspect)).orElseThrow();
            assertTrue(after.version() > before.version(), "the record did not change: its returns would count toward REDRIVEN");
            assertEquals(before.attempt(), after.attempt(), "nothing was counted or started");
            assertEquals(before.state(), after.state());
        }
    }

    /**
     * A redelivered copy reads the ledger before anything else; when that read finds the ledger down, the copy goes
     * back uncounted and the ledger gate closes, as it does when a write fails. Before, the read's failure escaped
     * the stage: the poller logged it and went on receiving, so an outage met only by redelivered copies (retries
     * waiting on their ladder, say) never paused consumption and cycled their receive counts toward the DLQ.
     */
    @Test
    void aRedeliveredCopyWhoseFirstReadFindsTheLedgerDownGoesBackAndClosesTheGate() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Clock clock = Clock.fixed(now, ZoneOffset.UTC);
        LedgerStore down = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                throw new StoreUnavailable("the ledger", false, new java.net.SocketTimeoutException("read timed out"));
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                throw new AssertionError("nothing may be written while the ledger cannot be read");
            }
        };
        LedgerGate gate = new LedgerGate(down, decisions, clock, metrics, "worker-1", config);
        IntakeStage intake = intake(down, clock, gate);

        Optional<IntakeStage.Ticket> t = intake.admit(copy("redelivered-" + now.toEpochMilli(), "m-r", 3, now));

        assertTrue(t.isEmpty());
        assertTrue(gate.downSince().isPresent(), "the ledger gate is closed");
        assertEquals(java.util.List.of(config.consumer().visibilityTimeout()), source.changes, "the copy is hidden for one visibility timeout");
    }

    /**
     * A first copy's start write that landed but whose answer was lost leaves the attempt ACTIVE under this worker's lease,
     * its handler never run; the gate releases it (uncounted) once the ledger answers. Its copy was hidden once, for a
     * visibility timeout: an outage of this worker's ledger longer than that showed it to another worker, which found the
     * lease run out, charged the job a crash and ran it. The copy is now kept hidden at every failed probe, as an ending's is,
     * and shown once the start is settled.
     */
    @Test
    void aStartThatLandedUnansweredKeepsItsCopyHiddenWhileTheLedgerStaysDown() {
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        clock.now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        source.hands = clock;
        DynamoLedgerStore real = new DynamoLedgerStore(dynamo.client(), dynamo.names().ledgerTable(), clock);
        java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean wentDown = new java.util.concurrent.atomic.AtomicBoolean();
        LedgerStore landsThenGoesDown = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                if (down.get()) {
                    throw new StoreUnavailable("the ledger", false, new java.net.SocketTimeoutException("read timed out"));
                }
                return real.find(key);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                if (down.get()) {
                    throw new StoreUnavailable("the ledger", true, new java.net.SocketTimeoutException("read timed out"));
                }
                LedgerRecord written = real.write(next);
                if (!wentDown.getAndSet(true)) {
                    // The first write, the start, lands; its answer is lost as the ledger goes quiet.
                    down.set(true);
                    throw new StoreUnavailable("the ledger", true, new java.net.SocketTimeoutException("read timed out"));
                }
                return written;
            }
        };
        LedgerGate gate = new LedgerGate(landsThenGoesDown, decisions, clock, metrics, "worker-1", config);
        IntakeStage intake = intake(landsThenGoesDown, clock, gate);
        String job = "unsettled-" + clock.now.toEpochMilli();

        assertTrue(intake.admit(copy(job, "m-1", 1, clock.now)).isEmpty(), "nothing runs while the ledger does not answer");
        // An outage of two visibility timeouts, probed all along.
        long probes = config.consumer().visibilityTimeout().multipliedBy(2).dividedBy(gate.probeInterval()) + 1;
        for (int probe = 1; probe <= probes; probe++) {
            clock.now = clock.now.plus(gate.probeInterval());
            assertFalse(gate.open(), "the ledger still does not answer");
            assertTrue(source.hiddenUntil().isAfter(clock.now.plus(gate.probeInterval())),
                    "after failed probe " + probe + " the copy is hidden past the next probe, until " + source.hiddenUntil()
                            + " (now " + clock.now + ")");
        }

        down.set(false);
        clock.now = clock.now.plus(gate.probeInterval());
        assertTrue(gate.open(), "the ledger answers again");
        assertEquals(JobState.RETRY_WAIT, real.findOwn(JobKey.of("acme", job)).orElseThrow().state(), "the start released uncounted");
        assertEquals(Duration.ZERO, source.changes.getLast(), "and its copy shown at once, to run");
    }
}

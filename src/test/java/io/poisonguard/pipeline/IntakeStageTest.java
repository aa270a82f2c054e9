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

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}

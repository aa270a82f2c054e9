package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.Settings;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

import java.net.SocketTimeoutException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ledger gate's probe while the ledger is down. The probe runs on the receiver's thread (the consumption gate
 * asks it before every receive), so whatever the read throws decides whether that thread lives: an error the store
 * does not translate into "unavailable" (a 4xx such as an expired token or a denied action, a client error while
 * credentials load) escaped the probe and ended the receiver for good, with the worker still reporting that it polls.
 */
class LedgerGateTest {
    private final PoisonGuardConfig config = Configs.defaults().build();

    private static io.poisonguard.admission.InboundMessage copy(String jobId) {
        java.time.Instant at = java.time.Instant.parse("2026-12-01T10:00:00Z");
        return new io.poisonguard.admission.InboundMessage("m-" + jobId, "rh-" + jobId, "{}", java.util.Map.of(), at, 1, at);
    }

    @Test
    void aProbeFailingWithAnErrorTheStoreDoesNotTranslateKeepsTheGateClosedAndProbesAgainLater() {
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        AtomicInteger probes = new AtomicInteger();
        LedgerStore ledger = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                if (probes.getAndIncrement() == 0) {
                    throw DynamoDbException.builder().message("The security token included in the request is expired").statusCode(400).build();
                }
                return Optional.empty();
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                throw new AssertionError("the probe only reads");
            }
        };
        LedgerGate gate = new LedgerGate(ledger, new Decisions(Settings.policy(config)), clock, new Metrics(new SimpleMeterRegistry()), "worker-1", config);
        gate.unavailable(new StoreUnavailable("the ledger", false, new SocketTimeoutException("read timed out")));

        clock.now = clock.now.plus(gate.probeInterval());
        assertFalse(gate.open(), "a probe that failed does not open the gate");
        assertTrue(gate.downSince().isPresent());
        assertFalse(gate.open(), "the next probe waits for its interval");
        assertEquals(1, probes.get());

        clock.now = clock.now.plus(gate.probeInterval());
        assertTrue(gate.open(), "a probe that is answered opens the gate");
        assertEquals(2, probes.get());
    }

    /**
     * A role that lost its write permissions but kept its reads: the hot path's conditional writes are refused, the gate
     * closes, and a probe that only read opened it again 5 s later, for the next receive to meet the same refusal; every
     * cycle received the copies once more, toward SQS's redrive. After a refused write the probe writes too (a conditional
     * create of the probe's own item: a condition that fails is an answer) and stays closed while that is refused.
     */
    @Test
    void afterARefusedWriteTheProbeWritesTooAndAReadAloneDoesNotOpenTheGate() {
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        java.util.concurrent.atomic.AtomicBoolean writesAllowed = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicInteger probeWrites = new AtomicInteger();
        LedgerStore ledger = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                return Optional.empty();
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                assertEquals(LedgerGate.PROBE_KEY.jobId(), next.jobId(), "only the probe writes here");
                probeWrites.incrementAndGet();
                DynamoDbException denied = (DynamoDbException) DynamoDbException.builder().message("not authorized to perform: dynamodb:PutItem")
                        .statusCode(400).awsErrorDetails(software.amazon.awssdk.awscore.exception.AwsErrorDetails.builder()
                                .errorCode("AccessDeniedException").build()).build();
                if (!writesAllowed.get()) {
                    throw StoreUnavailable.refused("the ledger", "AccessDeniedException", denied);
                }
                throw new io.poisonguard.ledger.LedgerConflict(next.jobId(), 0);
            }
        };
        LedgerGate gate = new LedgerGate(ledger, new Decisions(Settings.policy(config)), clock, new Metrics(new SimpleMeterRegistry()), "worker-1", config);
        DynamoDbException denied = (DynamoDbException) DynamoDbException.builder().message("not authorized").statusCode(400)
                .awsErrorDetails(software.amazon.awssdk.awscore.exception.AwsErrorDetails.builder().errorCode("AccessDeniedException").build())
                .build();
        gate.unavailable(StoreUnavailable.refused("the ledger", "AccessDeniedException", denied));

        clock.now = clock.now.plus(gate.probeInterval());
        assertFalse(gate.open(), "a probe that can read but not write does not open the gate");
        assertEquals(1, probeWrites.get());

        writesAllowed.set(true);
        clock.now = clock.now.plus(gate.probeInterval());
        assertTrue(gate.open(), "a probe whose write is answered (its condition failing is an answer) opens the gate");
    }

    @Test
    void aStartLeftUnsettledWhileAProbeSettlesIsReleasedBeforeConsumptionResumes() {
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        HeartbeatRenewalTest.Ledger ledger = new HeartbeatRenewalTest.Ledger();
        LedgerGate[] gate = new LedgerGate[1];
        // Another job's start write: it landed, but its answer was lost while this probe's settling was under way.
        LedgerRecord landed = ledger.write(LedgerRecord.fresh("job-2", "t", "permit-report", 1, clock.now).withAttempt(1)
                .moveTo(io.poisonguard.ledger.JobState.ACTIVE, clock.now)
                .withEntry(io.poisonguard.ledger.AttemptEntry.started(1, 1, clock.now, "worker-1"), 10)
                .withLease("worker-1", clock.now.plusSeconds(60)));
        LedgerRecord earlier = LedgerRecord.fresh("job-1", "t", "permit-report", 1, clock.now).withAttempt(1);
        AtomicInteger settlingReads = new AtomicInteger();
        LedgerStore flapping = new LedgerStore() {
            @Override
            public Optional<LedgerRecord> find(JobKey key) {
                if (key.jobId().equals("job-1") && settlingReads.getAndIncrement() == 0) {
                    // While the probe's thread settles job-1, another thread's start write goes unanswered (the ledger
                    // flaps): it reports the outage, which is already on, and leaves its start to be settled.
                    gate[0].startUnanswered(new StoreUnavailable("the ledger", true, new SocketTimeoutException("read timed out")), landed,
                            copy("job-2"), new HeartbeatRenewalTest.QueueStub(), java.time.Duration.ofSeconds(60));
                }
                return ledger.find(key);
            }

            @Override
            public LedgerRecord write(LedgerRecord next) {
                return ledger.write(next);
            }
        };
        gate[0] = new LedgerGate(flapping, new Decisions(Settings.policy(config)), clock, new Metrics(new SimpleMeterRegistry()), "worker-1", config);
        gate[0].startUnanswered(new StoreUnavailable("the ledger", true, new SocketTimeoutException("read timed out")), earlier,
                copy("job-1"), new HeartbeatRenewalTest.QueueStub(), java.time.Duration.ofSeconds(60));

        clock.now = clock.now.plus(gate[0].probeInterval());
        for (int probe = 0; probe < 3 && !gate[0].open(); probe++) {
            clock.now = clock.now.plus(gate[0].probeInterval());
        }

        assertTrue(gate[0].downSince().isEmpty(), "the gate opens once the ledger answers");
        LedgerRecord stored = ledger.find(JobKey.of("t", "job-2")).orElseThrow();
        assertEquals(io.poisonguard.ledger.JobState.RETRY_WAIT, stored.state(),
                "the start that landed unanswered is released before consumption resumes, not left ACTIVE to run out into a crash");
    }
}

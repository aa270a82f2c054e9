package io.poisonguard.pipeline;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.poisonguard.admission.InboundMessage;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.Settings;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Disposition;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.observability.Metrics;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replayed job (generation 2) that succeeds tells its quarantine record (REPLAYED) before its copy is deleted.
 * Before, the copy was deleted first: a quarantine write that failed then left the record REPLAYING until it
 * expired and the replay's outcome alert was never sent, with no copy left to try again.
 */
class ReplayOutcomeTest {
    /** SQS as far as the outcome stage uses it: records deletes. */
    static final class Deletes extends HeartbeatRenewalTest.QueueStub {
        final List<String> deleted = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void delete(InboundMessage message) {
            deleted.add(message.messageId());
        }
    }

    @Test
    void aReplaysSuccessThatCannotBeToldToItsQuarantineRecordKeepsItsCopy() {
        PoisonGuardConfig config = Configs.defaults().build();
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        AtomicInteger told = new AtomicInteger();
        QuarantineStore quarantine = (QuarantineStore) Proxy.newProxyInstance(QuarantineStore.class.getClassLoader(),
                new Class<?>[] {QuarantineStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("recordReplayOutcome")) {
                        told.incrementAndGet();
                        assertEquals(QuarantineStatus.REPLAYED, args[2]);
                        throw new StoreUnavailable("the quarantine table", false, new java.net.SocketTimeoutException("read timed out"));
                    }
                    throw new AssertionError("not expected here: " + method.getName());
                });
        Deletes queue = new Deletes();
        Decisions decisions = new Decisions(Settings.policy(config));
        OutcomeStage outcomes = new OutcomeStage(new HeartbeatRenewalTest.Ledger(), queue, null, decisions, clock, new SplittableRandom(1),
                new Metrics(new SimpleMeterRegistry()), null, quarantine, null, null, null, null, config, "worker-1");
        LedgerRecord succeeded = LedgerRecord.fresh("job-r", "tenant-a", "permit-report", 2, clock.now).withAttempt(4)
                .moveTo(JobState.ACTIVE, clock.now).moveTo(JobState.SUCCEEDED, clock.now).withVersion(9);
        InboundMessage m = new InboundMessage("m-replay", "rh", "{}", Map.of(), clock.now, 1, clock.now);

        outcomes.apply(succeeded, new Disposition.Complete(succeeded), m, null);

        assertEquals(1, told.get(), "the success was told to the quarantine record");
        assertFalse(queue.deleted.contains("m-replay"), "the copy is kept until its record is told: it comes back and tells it then");
        assertTrue(queue.deleted.isEmpty());
    }

    /** The copy kept back comes in again as a copy of a SUCCEEDED job, and tells the record then, once. */
    @Test
    void aCopyOfASucceededReplayTellsAnUntoldQuarantineRecordOnce() {
        PoisonGuardConfig config = Configs.defaults().build();
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        List<QuarantineStatus> told = Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicReference<QuarantineStatus> status = new java.util.concurrent.atomic.AtomicReference<>(QuarantineStatus.REPLAYING);
        QuarantineStore quarantine = (QuarantineStore) Proxy.newProxyInstance(QuarantineStore.class.getClassLoader(),
                new Class<?>[] {QuarantineStore.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "recordReplayOutcome" -> {
                        told.add((QuarantineStatus) args[2]);
                        status.set((QuarantineStatus) args[2]);
                        yield null;
                    }
                    case "find" -> java.util.Optional.of(record(clock.now, status.get(), status.get() == QuarantineStatus.REPLAYING ? null : "SUCCEEDED"));
                    default -> throw new AssertionError("not expected here: " + method.getName());
                });
        io.poisonguard.owners.Owner ops = new io.poisonguard.owners.Owner("operations", java.util.Set.of(), java.util.Set.of(), Duration.ofHours(4), Duration.ofDays(3));
        io.poisonguard.alerts.Alerts alerts = new io.poisonguard.alerts.Alerts(config,
                new com.fasterxml.jackson.databind.ObjectMapper().registerModule(new com.fasterxml.jackson.datatype.jsr310.JavaTimeModule()), clock,
                new SimpleMeterRegistry(), new io.poisonguard.owners.OwnerMap(List.of(), ops));
        Decisions decisions = new Decisions(Settings.policy(config));
        OutcomeStage outcomes = new OutcomeStage(new HeartbeatRenewalTest.Ledger(), new Deletes(), null, decisions, clock, new SplittableRandom(1),
                new Metrics(new SimpleMeterRegistry()), null, quarantine, alerts, null, null, null, config, "worker-1");
        LedgerRecord succeeded = LedgerRecord.fresh("job-r", "tenant-a", "permit-report", 2, clock.now).withAttempt(4)
                .moveTo(JobState.ACTIVE, clock.now).moveTo(JobState.SUCCEEDED, clock.now).withVersion(9);

        assertTrue(outcomes.replaySucceededLate(succeeded));
        assertTrue(outcomes.replaySucceededLate(succeeded), "a record told already is not told again");
        assertEquals(List.of(QuarantineStatus.REPLAYED), told);
    }

    private static io.poisonguard.quarantine.QuarantineRecord record(java.time.Instant now, QuarantineStatus status, String outcome) {
        return new io.poisonguard.quarantine.QuarantineRecord("job-r", "tenant-a", "permit-report", 2, io.poisonguard.failure.FailureClass.PERMANENT,
                "PERMANENT limit reached", 3, Map.of(io.poisonguard.failure.FailureClass.PERMANENT, 3), null, List.of(), now, now, now,
                now.plus(Duration.ofDays(14)), "m-1", status, List.of(new io.poisonguard.quarantine.ReplayEntry(2, now, "olga", "fixed upstream", outcome)),
                null, null, null);
    }
}

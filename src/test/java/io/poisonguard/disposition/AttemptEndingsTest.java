package io.poisonguard.disposition;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static io.poisonguard.disposition.Policies.policy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ways an attempt ends besides a handler's failure: past its deadline, with a fatal error, or given back without blame. */
class AttemptEndingsTest {
    static final Instant NOW = Instant.parse("2026-05-01T08:00:00Z");
    static final Duration DEADLINE = Duration.ofMinutes(2);
    static final Decisions.Lane ALONE = new Decisions.Lane(true, 0);
    static final Decisions.Lane BESIDE_THREE = new Decisions.Lane(false, 3);

    final Random random = new Random(11);

    static LedgerRecord fresh() {
        return LedgerRecord.fresh("job-1", "acme", "permit-report", 1, NOW);
    }

    LedgerRecord run(Decisions decisions, LedgerRecord record, Instant at, Decisions.Lane lane) {
        Intake intake = decisions.intake(record, Optional.empty(), 1, at, "worker-a", lane, random);
        return assertInstanceOf(Intake.Run.class, intake, "the job runs").next();
    }

    @Test
    void anAttemptPastItsDeadlineCountsATimeoutAndTheJobIsQuarantinedAtTimeoutsOwnLimit() {
        Decisions decisions = policy().limit(FailureClass.TIMEOUT, 2).limit(FailureClass.TRANSIENT, 1).decisions();
        LedgerRecord running = run(decisions, fresh(), NOW, Decisions.Lane.SHARED);

        Disposition.RetryAfter first = assertInstanceOf(Disposition.RetryAfter.class,
                decisions.timedOut(running, DEADLINE, NOW.plus(DEADLINE), random), "one timeout of a limit of two retries");
        AttemptEntry entry = first.next().currentEntry();
        assertEquals(AttemptOutcome.TIMED_OUT, entry.outcome());
        assertEquals(FailureClass.TIMEOUT, entry.failureClass());
        assertEquals("DeadlineExceeded", entry.errorType());
        assertTrue(entry.message().contains("deadline of 2m"), entry.message());
        assertEquals(Map.of(FailureClass.TIMEOUT, 1), first.next().failures());
        assertEquals(JobState.RETRY_WAIT, first.next().state());
        assertNull(first.next().leaseOwner());

        Instant later = NOW.plus(DEADLINE).plus(first.delay());
        Disposition second = decisions.timedOut(run(decisions, first.next(), later, Decisions.Lane.SHARED), DEADLINE, later.plus(DEADLINE), random);

        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class, second);
        assertEquals(FailureClass.TIMEOUT, quarantine.failureClass());
        assertEquals(2, quarantine.next().failuresOf(FailureClass.TIMEOUT));
        assertTrue(quarantine.reason().contains("TIMEOUT limit reached: 2 of 2 attempts timed out"), quarantine.reason());
        assertEquals(JobState.QUARANTINED, quarantine.next().state());
    }

    @Test
    void aFatalErrorWhileRunningAloneCountsAsTheJobsOwnCrash() {
        Decisions decisions = policy().decisions();
        LedgerRecord running = run(decisions, fresh(), NOW, ALONE);

        Disposition d = decisions.crashed(running, "OutOfMemoryError", NOW.plusSeconds(5), random);

        LedgerRecord next = assertInstanceOf(Disposition.RetryAfter.class, d).next();
        assertEquals(Map.of(FailureClass.CRASH, 1), next.failures());
        AttemptEntry entry = next.currentEntry();
        assertEquals(AttemptOutcome.CRASHED, entry.outcome());
        assertEquals(FailureClass.CRASH, entry.failureClass());
        assertEquals("OutOfMemoryError", entry.errorType());
        assertTrue(entry.message().contains("ended with OutOfMemoryError while running alone"), entry.message());
        assertNull(next.leaseOwner());
    }

    @Test
    void aFatalErrorAmongOtherJobsCountsAsAnAmbiguousCrashAndMakesTheJobASuspect() {
        Decisions decisions = policy().decisions();
        LedgerRecord running = run(decisions, fresh(), NOW, BESIDE_THREE);

        Disposition d = decisions.crashed(running, "InternalError", NOW.plusSeconds(5), random);

        LedgerRecord next = assertInstanceOf(Disposition.RetryAfter.class, d).next();
        assertEquals(Map.of(FailureClass.CRASH_AMBIGUOUS, 1), next.failures());
        assertEquals(FailureClass.CRASH_AMBIGUOUS, next.currentEntry().failureClass());
        assertTrue(next.currentEntry().message().contains("3+ other jobs"), next.currentEntry().message());
        assertTrue(decisions.needsIsolation(next, NOW.plusSeconds(6)), "its next attempt runs alone");
    }

    @Test
    void withAttributionOffAFatalErrorAmongOtherJobsCountsAsTheJobsOwnCrash() {
        Decisions decisions = policy().attributeCrashes(false).decisions();
        LedgerRecord running = run(decisions, fresh(), NOW, BESIDE_THREE);

        Disposition d = decisions.crashed(running, "OutOfMemoryError", NOW.plusSeconds(5), random);

        assertEquals(Map.of(FailureClass.CRASH, 1), d.next().failures());
    }

    @Test
    void fatalErrorsWhileRunningAloneQuarantineTheJobAtTheCrashLimit() {
        Decisions decisions = policy().limit(FailureClass.CRASH, 2).decisions();
        LedgerRecord record = fresh();
        Instant now = NOW;
        Disposition d = decisions.crashed(run(decisions, record, now, ALONE), "OutOfMemoryError", now, random);
        now = now.plus(assertInstanceOf(Disposition.RetryAfter.class, d).delay());

        Disposition second = decisions.crashed(run(decisions, d.next(), now, ALONE), "OutOfMemoryError", now, random);

        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class, second);
        assertEquals(FailureClass.CRASH, quarantine.failureClass());
        assertTrue(quarantine.reason().contains("2 of 2 attempts crashed"), quarantine.reason());
    }

    @ParameterizedTest
    @EnumSource(value = AttemptOutcome.class, names = {"ABANDONED", "HELD"})
    void anAttemptGivenBackWithoutBlameCountsNothingReleasesTheLeaseAndWaitsTheGivenDelay(AttemptOutcome outcome) {
        Decisions decisions = policy().limit(FailureClass.TRANSIENT, 3).decisions();
        LedgerRecord first = run(decisions, fresh(), NOW, Decisions.Lane.SHARED);
        Disposition.RetryAfter afterFailure = assertInstanceOf(Disposition.RetryAfter.class,
                decisions.failed(first, new io.poisonguard.failure.Failure(FailureClass.TRANSIENT, "Boom", "503"), NOW, random));
        Instant now = NOW.plus(afterFailure.delay());
        LedgerRecord running = run(decisions, afterFailure.next(), now, Decisions.Lane.SHARED);
        Duration delay = Duration.ofSeconds(30);

        Disposition d = decisions.released(running, outcome, "the worker shut down", delay, now.plusSeconds(4));

        Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class, d);
        LedgerRecord next = retry.next();
        assertEquals(delay, retry.delay());
        assertEquals(Map.of(FailureClass.TRANSIENT, 1), next.failures(), "the earlier failure stays, nothing is added");
        assertEquals(JobState.RETRY_WAIT, next.state());
        assertNull(next.leaseOwner());
        assertNull(next.leaseUntil());
        AttemptEntry entry = next.currentEntry();
        assertEquals(2, entry.number());
        assertEquals(outcome, entry.outcome());
        assertNull(entry.failureClass());
        assertEquals("the worker shut down", entry.message());
        assertEquals(delay, entry.retryDelay());
        assertEquals(now.plusSeconds(4), entry.endedAt());
        assertFalse(decisions.needsIsolation(next, now.plusSeconds(5)), "a job given back without blame is no suspect");
    }

    @ParameterizedTest
    @EnumSource(value = AttemptOutcome.class, names = {"ABANDONED", "HELD"}, mode = EnumSource.Mode.EXCLUDE)
    void givingBackAnAttemptWithAnyOutcomeButAbandonedOrHeldIsRefused(AttemptOutcome charged) {
        Decisions decisions = policy().decisions();
        LedgerRecord running = run(decisions, fresh(), NOW, Decisions.Lane.SHARED);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> decisions.released(running, charged, "why", Duration.ZERO, NOW));

        assertTrue(e.getMessage().contains(charged.name()), e.getMessage());
    }

    @Test
    void aJobAbandonedAtShutdownTenTimesIsNeverQuarantinedAndItsNextAttemptIsNoSuspect() {
        Decisions decisions = policy().limit(FailureClass.CRASH, 1).limit(FailureClass.CRASH_AMBIGUOUS, 1).decisions();
        LedgerRecord record = fresh();
        Instant now = NOW;

        for (int shutdown = 1; shutdown <= 10; shutdown++) {
            LedgerRecord running = run(decisions, record, now, BESIDE_THREE);
            now = now.plusSeconds(20);
            Disposition d = decisions.released(running, AttemptOutcome.ABANDONED, "the worker shut down", Duration.ZERO, now);
            record = assertInstanceOf(Disposition.RetryAfter.class, d, "shutdown " + shutdown).next();
            assertEquals(Map.of(), record.failures(), "shutdown " + shutdown + " counted nothing");
            assertFalse(decisions.needsIsolation(record, now), "after shutdown " + shutdown + " the job is no suspect");
        }

        LedgerRecord eleventh = run(decisions, record, now, BESIDE_THREE);
        assertEquals(11, eleventh.attempt());
        assertFalse(eleventh.currentEntry().isolated());
        Disposition done = decisions.succeeded(eleventh, now.plusSeconds(1), Duration.ofDays(1));
        assertEquals(JobState.SUCCEEDED, done.next().state());
    }
}

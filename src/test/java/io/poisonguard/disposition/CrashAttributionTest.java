package io.poisonguard.disposition;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 5: blame the job that kills workers, never its batch-mates. */
class CrashAttributionTest {
    static final Instant T0 = Instant.parse("2026-05-01T08:00:00Z");
    static final Decisions.Lane BESIDE_SEVEN = new Decisions.Lane(false, 7);
    static final Decisions.Lane ALONE = new Decisions.Lane(true, 0);
    final Random random = new Random(7);

    /** Starts an attempt in {@code lane} and lets its lease run out, as a dead worker would. */
    private LedgerRecord crashIn(Decisions d, LedgerRecord r, Decisions.Lane lane, Instant at) {
        Intake run = d.intake(r, Optional.empty(), 1, at, "w1", lane, random);
        assertInstanceOf(Intake.Run.class, run, "the job runs");
        return ((Intake.Run) run).next();
    }

    private Disposition found(Decisions d, LedgerRecord crashed, Instant at, Decisions.Lane lane) {
        Intake next = d.intake(crashed, Optional.empty(), 1, at, "w2", lane, random);
        return next instanceof Intake.Decided decided ? decided.disposition() : null;
    }

    @Test
    void aCrashAmongOtherJobsCountsAsAmbiguousAndMakesTheJobASuspect() {
        Decisions d = Policies.policy().ladder(FailureClass.CRASH_AMBIGUOUS, Policies.TEN_SECONDS_DOUBLING).decisions();
        LedgerRecord running = crashIn(d, LedgerRecord.fresh("j", "t", "x", 1, T0), BESIDE_SEVEN, T0);
        assertEquals(7, running.currentEntry().othersInFlight());
        Instant later = T0.plus(Duration.ofMinutes(5));

        assertTrue(d.needsIsolation(running, later), "its lease ran out: a suspect");
        Disposition afterCrash = found(d, running, later, ALONE);
        LedgerRecord waiting = afterCrash.next();
        assertEquals(1, waiting.failuresOf(FailureClass.CRASH_AMBIGUOUS));
        assertEquals(0, waiting.failuresOf(FailureClass.CRASH));
        assertEquals(AttemptOutcome.CRASHED, waiting.currentEntry().outcome());
        assertTrue(waiting.currentEntry().message().contains("7+ other jobs"), waiting.currentEntry().message());
        assertTrue(d.needsIsolation(waiting, later.plusSeconds(30)), "still a suspect until it runs alone");
    }

    @Test
    void onlyCrashesWhileRunningAloneCountTowardTheCrashLimit() {
        Decisions d = Policies.policy().limit(FailureClass.CRASH, 3).decisions();
        LedgerRecord r = LedgerRecord.fresh("culprit", "t", "x", 1, T0);
        Instant now = T0;
        r = crashIn(d, r, BESIDE_SEVEN, now);
        for (int i = 0; i < 3; i++) {
            now = now.plus(Duration.ofMinutes(5));
            Disposition afterCrash = found(d, r, now, ALONE);
            if (afterCrash instanceof Disposition.Quarantine q) {
                assertEquals(FailureClass.CRASH, q.failureClass());
                fail("quarantined too early, after " + i + " isolated crashes");
            }
            now = now.plus(Duration.ofMinutes(5));
            r = crashIn(d, afterCrash.next(), ALONE, now);
            assertTrue(r.currentEntry().isolated());
        }
        Disposition last = found(d, r, now.plus(Duration.ofMinutes(5)), ALONE);
        Disposition.Quarantine q = assertInstanceOf(Disposition.Quarantine.class, last);
        assertEquals(FailureClass.CRASH, q.failureClass());
        assertEquals(3, q.next().failuresOf(FailureClass.CRASH));
        assertEquals(1, q.next().failuresOf(FailureClass.CRASH_AMBIGUOUS));
        assertTrue(q.reason().contains("while running alone"), q.reason());
    }

    @Test
    void anInnocentThatRunsAloneAfterAnAmbiguousCrashSucceedsWithoutACrashCounted() {
        Decisions d = Policies.policy().decisions();
        LedgerRecord r = crashIn(d, LedgerRecord.fresh("innocent", "t", "x", 1, T0), BESIDE_SEVEN, T0);
        Instant now = T0.plus(Duration.ofMinutes(5));
        r = found(d, r, now, ALONE).next();
        now = now.plus(Duration.ofMinutes(1));
        Intake run = d.intake(r, Optional.empty(), 1, now, "w2", ALONE, random);
        LedgerRecord alone = assertInstanceOf(Intake.Run.class, run).next();
        Disposition done = d.succeeded(alone, now.plusSeconds(1), Duration.ofDays(1));
        assertEquals(JobState.SUCCEEDED, done.next().state());
        assertEquals(0, done.next().failuresOf(FailureClass.CRASH));
        assertFalse(d.needsIsolation(done.next(), now.plusSeconds(2)));
    }

    @Test
    void ambiguousCrashesHaveTheirOwnBoundSoNothingCyclesForever() {
        Decisions d = Policies.policy().limit(FailureClass.CRASH_AMBIGUOUS, 2).decisions();
        LedgerRecord r = crashIn(d, LedgerRecord.fresh("j", "t", "x", 1, T0), BESIDE_SEVEN, T0);
        Instant now = T0.plus(Duration.ofMinutes(5));
        r = crashIn(d, found(d, r, now, BESIDE_SEVEN).next(), BESIDE_SEVEN, now.plusSeconds(60));
        Disposition.Quarantine q = assertInstanceOf(Disposition.Quarantine.class, found(d, r, now.plus(Duration.ofMinutes(10)), BESIDE_SEVEN));
        assertEquals(FailureClass.CRASH_AMBIGUOUS, q.failureClass());
    }

    @Test
    void withAttributionOffEveryCrashCountsAgainstEveryJobInFlight() {
        Decisions d = Policies.policy().attributeCrashes(false).decisions();
        LedgerRecord r = crashIn(d, LedgerRecord.fresh("j", "t", "x", 1, T0), BESIDE_SEVEN, T0);
        Instant later = T0.plus(Duration.ofMinutes(5));
        assertFalse(d.needsIsolation(r, later), "no isolation lane without attribution");
        LedgerRecord after = found(d, r, later, BESIDE_SEVEN).next();
        assertEquals(1, after.failuresOf(FailureClass.CRASH));
        assertEquals(0, after.failuresOf(FailureClass.CRASH_AMBIGUOUS));
    }

    private static void fail(String message) {
        throw new AssertionError(message);
    }
}

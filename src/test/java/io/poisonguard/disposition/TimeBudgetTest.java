package io.poisonguard.disposition;

import io.poisonguard.failure.Failure;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.LedgerRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Random;

import static io.poisonguard.disposition.Policies.policy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * Issue 10: a class's budget in time as well as count. Five quick TRANSIENT failures within a minute
 * of a blip must not quarantine a job whose class promises it ten minutes.
 */
class TimeBudgetTest {
    static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
    final Random random = new Random(3);
    final Decisions decisions = policy().limit(FailureClass.TRANSIENT, 2).maxElapsed(FailureClass.TRANSIENT, Duration.ofMinutes(10)).decisions();

    private Disposition failAt(LedgerRecord record, Instant at) {
        LedgerRecord running = assertInstanceOf(Intake.Run.class, decisions.intake(record, Optional.empty(), 1, at, "w1", random)).next();
        return decisions.failed(running, new Failure(FailureClass.TRANSIENT, "Http503", "503"), at, random);
    }

    @Test
    void reachingTheCountEarlyRetriesUntilTheTimeBudgetIsSpent() {
        LedgerRecord job = LedgerRecord.fresh("job-1", "acme", "permit-report", 1, T0);
        Disposition first = failAt(job, T0);
        Disposition second = failAt(assertInstanceOf(Disposition.RetryAfter.class, first).next(), T0.plusSeconds(30));
        Disposition.RetryAfter stillRetrying = assertInstanceOf(Disposition.RetryAfter.class, second,
                "2 of 2 failures after 30 s, but the class's 10 minutes are not spent");
        assertEquals(2, stillRetrying.next().failuresOf(FailureClass.TRANSIENT));

        Disposition third = failAt(stillRetrying.next(), T0.plus(Duration.ofMinutes(11)));
        Disposition.Quarantine q = assertInstanceOf(Disposition.Quarantine.class, third, "count and time both spent");
        assertEquals(FailureClass.TRANSIENT, q.failureClass());
    }

    @Test
    void withoutATimeBudgetTheCountAloneDecides() {
        Decisions countOnly = policy().limit(FailureClass.TRANSIENT, 2).decisions();
        LedgerRecord job = LedgerRecord.fresh("job-2", "acme", "permit-report", 1, T0);
        LedgerRecord running = assertInstanceOf(Intake.Run.class, countOnly.intake(job, Optional.empty(), 1, T0, "w1", random)).next();
        Disposition first = countOnly.failed(running, new Failure(FailureClass.TRANSIENT, "Http503", "503"), T0, random);
        LedgerRecord again = assertInstanceOf(Intake.Run.class, countOnly.intake(assertInstanceOf(Disposition.RetryAfter.class, first).next(),
                Optional.empty(), 1, T0.plusSeconds(30), "w1", random)).next();
        assertInstanceOf(Disposition.Quarantine.class, countOnly.failed(again, new Failure(FailureClass.TRANSIENT, "Http503", "503"),
                T0.plusSeconds(30), random));
    }
}

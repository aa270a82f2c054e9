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

/** Issue 10: a job's ladder delay belongs to the job, so a duplicate copy honours it too. */
class RetryDelayTest {
    static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");
    final Random random = new Random(7);
    final Decisions decisions = policy().decisions();

    private Disposition.RetryAfter failedOnce() {
        LedgerRecord running = assertInstanceOf(Intake.Run.class,
                decisions.intake(LedgerRecord.fresh("job-1", "acme", "permit-report", 1, NOW), Optional.empty(), 1, NOW, "w1", random)).next();
        Disposition d = decisions.failed(running, new Failure(FailureClass.THROTTLED, "Quota", "429"), NOW.plusSeconds(1), random);
        return assertInstanceOf(Disposition.RetryAfter.class, d);
    }

    @Test
    void aDuplicateCopyArrivingDuringTheRetryDelayWaitsOutTheRestOfIt() {
        Disposition.RetryAfter retry = failedOnce();
        Instant readyAt = NOW.plusSeconds(1).plus(retry.delay());
        Instant early = NOW.plusSeconds(1).plusMillis(Math.max(0, retry.delay().toMillis() / 4));
        if (Duration.between(early, readyAt).compareTo(Duration.ofSeconds(2)) < 0) {
            early = readyAt.minusSeconds(2);
        }
        Intake intake = decisions.intake(retry.next(), Optional.empty(), 1, early, "w2", random);

        Intake.NotYet wait = assertInstanceOf(Intake.NotYet.class, intake, "a copy inside the delay does not run");
        assertEquals(Duration.between(early, readyAt), wait.retryIn());
    }

    @Test
    void theCopyRunsOnceTheDelayHasPassed() {
        Disposition.RetryAfter retry = failedOnce();
        Instant readyAt = NOW.plusSeconds(1).plus(retry.delay());
        Intake intake = decisions.intake(retry.next(), Optional.empty(), 1, readyAt, "w2", random);
        assertEquals(2, assertInstanceOf(Intake.Run.class, intake).next().attempt());
    }

    @Test
    void aCopyArrivingAMomentEarlyStillRuns() {
        Disposition.RetryAfter retry = failedOnce();
        Instant readyAt = NOW.plusSeconds(1).plus(retry.delay());
        assertInstanceOf(Intake.Run.class, decisions.intake(retry.next(), Optional.empty(), 1, readyAt.minusMillis(500), "w2", random),
                "SQS and clocks are not exact to the millisecond");
    }
}

package io.poisonguard.disposition;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.Failure;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Jitter;
import io.poisonguard.ladder.Ladder;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DecisionsProperties {
    private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
    /** Limits are 1..4 per class, so at most 6 x 3 failures leave every class below its limit. */
    private static final int ENOUGH_FAILURES = 24;

    @Provide
    Arbitrary<Policy> policies() {
        Arbitrary<Ladder> ladders = Combinators.combine(
                Arbitraries.longs().between(1, 600).map(Duration::ofSeconds),
                Arbitraries.doubles().between(1.0, 3.0),
                Arbitraries.longs().between(1, 43_200).map(Duration::ofSeconds),
                // FULL jitter may draw a zero delay, which lets a crash run the next attempt in the
                // same intake; that path has its own example test.
                Arbitraries.of(Jitter.EQUAL, Jitter.NONE)).as(Ladder::new);
        Arbitrary<ClassPolicy> classPolicies = Combinators.combine(
                Arbitraries.integers().between(1, 4),
                ladders,
                Arbitraries.longs().between(1, 7 * 24).map(Duration::ofHours).optional()).as(ClassPolicy::new);
        return Combinators.combine(classPolicies.list().ofSize(FailureClass.values().length), Arbitraries.integers().between(1, 10))
                .as((list, historySize) -> {
                    Map<FailureClass, ClassPolicy> classes = new EnumMap<>(FailureClass.class);
                    for (FailureClass c : FailureClass.values()) {
                        classes.put(c, list.get(c.ordinal()));
                    }
                    return new Policy(classes, Duration.ofSeconds(60), historySize);
                });
    }

    /**
     * Drives a job through {@code failures}: ADMISSION arrives as a pre-flight rejection, CRASH as a
     * lease that runs out with the attempt open, every other class as a handler failure.
     */
    @Property(tries = 200)
    void anyRunOfFailuresQuarantinesTheJobWithinTheAttemptBoundAndNeverLeavesItLeased(
            @ForAll("policies") Policy policy, @ForAll @Size(ENOUGH_FAILURES) List<FailureClass> failures, @ForAll long seed) {
        Decisions decisions = new Decisions(policy);
        Random random = new Random(seed);
        LedgerRecord record = LedgerRecord.fresh("job-1", "acme", "permit-report", 1, T0);
        Instant now = T0;
        Disposition.Quarantine quarantine = null;

        for (FailureClass c : failures) {
            Optional<String> rejection = c == FailureClass.ADMISSION ? Optional.of("too-many-tokens") : Optional.empty();
            Intake intake = decisions.intake(record, rejection, 1, now, "worker-a", random);
            Disposition disposition;
            if (c == FailureClass.ADMISSION) {
                disposition = assertInstanceOf(Intake.Decided.class, intake).disposition();
            } else {
                LedgerRecord running = assertInstanceOf(Intake.Run.class, intake).next();
                assertTrue(running.attempt() <= policy.attemptBound(), "attempt " + running.attempt() + " ran past the bound");
                assertEquals(JobState.ACTIVE, running.state());
                assertEquals("worker-a", running.leaseOwner());
                if (c == FailureClass.CRASH) {
                    now = running.leaseUntil().plusMillis(1);
                    disposition = assertInstanceOf(Intake.Decided.class,
                            decisions.intake(running, Optional.empty(), 1, now, "worker-b", random)).disposition();
                } else {
                    now = now.plusSeconds(1);
                    disposition = decisions.failed(running, new Failure(c, "BoomException", "boom"), now, random);
                }
            }
            record = disposition.next();
            assertNull(record.leaseOwner(), "a job waiting or quarantined holds no lease");
            assertNull(record.leaseUntil(), "a job waiting or quarantined holds no lease");
            if (disposition instanceof Disposition.Quarantine q) {
                quarantine = q;
                break;
            }
            Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class, disposition);
            assertEquals(JobState.RETRY_WAIT, record.state());
            assertTrue(retry.delay().isPositive());
            now = now.plus(retry.delay());
        }

        assertNotNull(quarantine, ENOUGH_FAILURES + " failures must exhaust some class");
        assertTrue(record.attempt() <= policy.attemptBound(),
                "quarantined after " + record.attempt() + " attempts, bound " + policy.attemptBound());
        assertEquals(JobState.QUARANTINED, record.state());
        assertEquals(quarantine.failureClass(), record.quarantineClass());
        assertTrue(record.history().size() <= policy.historySize());
        FailureClass c = quarantine.failureClass();
        assertTrue(record.failuresOf(c) == policy.of(c).maxAttempts() || quarantine.reason().contains("cutoff"),
                "quarantined below the limit without a cutoff: " + quarantine.reason());
        Intake again = decisions.intake(record, Optional.empty(), 1, now.plus(Duration.ofDays(30)), "worker-c", random);
        assertInstanceOf(Intake.AlreadyQuarantined.class, again);
    }

    @Property(tries = 200)
    void failuresOfAClassBelowItsLimitAlwaysRetryWhenNoCutoffApplies(
            @ForAll("policies") Policy policy, @ForAll FailureClass c, @ForAll long seed) {
        ClassPolicy limits = policy.of(c);
        Map<FailureClass, ClassPolicy> classes = new EnumMap<>(policy.classes());
        classes.put(c, new ClassPolicy(limits.maxAttempts(), limits.ladder(), Optional.empty()));
        Decisions decisions = new Decisions(new Policy(classes, policy.lease(), policy.historySize()));
        Random random = new Random(seed);
        LedgerRecord record = LedgerRecord.fresh("job-1", "acme", "permit-report", 1, T0);
        Instant now = T0;

        for (int failure = 1; failure <= limits.maxAttempts(); failure++) {
            LedgerRecord running = assertInstanceOf(Intake.Run.class,
                    decisions.intake(record, Optional.empty(), 1, now, "worker-a", random)).next();
            Disposition d = decisions.failed(running, new Failure(c, "BoomException", "boom"), now, random);
            if (failure < limits.maxAttempts()) {
                Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class, d, "failure " + failure);
                assertTrue(retry.delay().compareTo(limits.ladder().ceiling(failure)) <= 0);
                assertTrue(retry.delay().compareTo(limits.ladder().floor(failure)) >= 0);
                record = retry.next();
                now = now.plus(retry.delay());
            } else {
                assertEquals(c, assertInstanceOf(Disposition.Quarantine.class, d).failureClass());
            }
        }
    }
}

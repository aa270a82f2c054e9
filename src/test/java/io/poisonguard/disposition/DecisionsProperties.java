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
    /** Limits are 1..4 per class, so at most 3 failures per class leave every class below its limit; one more exhausts one. */
    private static final int ENOUGH_FAILURES = FailureClass.values().length * 3 + 1;

    @Provide
    Arbitrary<List<FailureClass>> enoughFailures() {
        return Arbitraries.of(FailureClass.class).list().ofSize(ENOUGH_FAILURES);
    }

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

    /** Where each attempt runs: a CRASH is the job's own only when it ran alone (attribution is on in these policies). */
    private static final Decisions.Lane ALONE = new Decisions.Lane(true, 0);
    private static final Decisions.Lane BESIDE_OTHERS = new Decisions.Lane(false, 3);

    /**
     * Ends one attempt of {@code record} at {@code now} with a failure of class {@code c}, the way it
     * happens in the service: ADMISSION as a pre-flight rejection; CRASH as a lease that runs out
     * while the attempt ran alone (in the isolation lane) and CRASH_AMBIGUOUS as one that runs out
     * while it ran beside other jobs; TIMEOUT as an attempt past its deadline; every other class as a
     * handler failure. Returns the disposition and when it was decided.
     */
    private static Ended end(Decisions decisions, LedgerRecord record, FailureClass c, Instant now, Random random) {
        Optional<String> rejection = c == FailureClass.ADMISSION ? Optional.of("too-many-tokens") : Optional.empty();
        Decisions.Lane lane = switch (c) {
            case CRASH -> ALONE;
            case CRASH_AMBIGUOUS -> BESIDE_OTHERS;
            default -> Decisions.Lane.SHARED;
        };
        Intake intake = decisions.intake(record, rejection, 1, now, "worker-a", lane, random);
        if (c == FailureClass.ADMISSION) {
            return new Ended(assertInstanceOf(Intake.Decided.class, intake).disposition(), now);
        }
        LedgerRecord running = assertInstanceOf(Intake.Run.class, intake).next();
        assertEquals(JobState.ACTIVE, running.state());
        assertEquals("worker-a", running.leaseOwner());
        return switch (c) {
            case CRASH, CRASH_AMBIGUOUS -> {
                Instant found = running.leaseUntil().plusMillis(1);
                yield new Ended(assertInstanceOf(Intake.Decided.class,
                        decisions.intake(running, Optional.empty(), 1, found, "worker-b", random)).disposition(), found);
            }
            case TIMEOUT -> new Ended(decisions.timedOut(running, Duration.ofSeconds(30), now.plusSeconds(30), random), now.plusSeconds(30));
            default -> new Ended(decisions.failed(running, new Failure(c, "BoomException", "boom"), now.plusSeconds(1), random),
                    now.plusSeconds(1));
        };
    }

    private record Ended(Disposition disposition, Instant at) {
    }

    /**
     * Drives a job through {@code failures}, each ending its attempt the way that class does in the
     * service (see {@link #end}): each counts against its own class and no other, no class is
     * retried once at its limit, and the job is quarantined within the attempt bound.
     */
    @Property(tries = 200)
    void anyRunOfFailuresQuarantinesTheJobWithinTheAttemptBoundAndNeverLeavesItLeased(
            @ForAll("policies") Policy policy, @ForAll("enoughFailures") List<FailureClass> failures, @ForAll long seed) {
        Decisions decisions = new Decisions(policy);
        Random random = new Random(seed);
        LedgerRecord record = LedgerRecord.fresh("job-1", "acme", "permit-report", 1, T0);
        Instant now = T0;
        Disposition.Quarantine quarantine = null;

        for (FailureClass c : failures) {
            Map<FailureClass, Integer> before = record.failures();
            Ended ended = end(decisions, record, c, now, random);
            Disposition disposition = ended.disposition();
            now = ended.at();
            assertTrue(disposition.next().attempt() <= policy.attemptBound(),
                    "attempt " + disposition.next().attempt() + " ran past the bound");
            Map<FailureClass, Integer> counted = new EnumMap<>(FailureClass.class);
            counted.putAll(before);
            counted.merge(c, 1, Integer::sum);
            assertEquals(counted, disposition.next().failures(), "a " + c + " failure counts against " + c + " only");
            record = disposition.next();
            assertNull(record.leaseOwner(), "a job waiting or quarantined holds no lease");
            assertNull(record.leaseUntil(), "a job waiting or quarantined holds no lease");
            if (disposition instanceof Disposition.Quarantine q) {
                quarantine = q;
                break;
            }
            Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class, disposition);
            assertTrue(record.failuresOf(c) < policy.of(c).maxAttempts(),
                    c + " retried at " + record.failuresOf(c) + " failures, limit " + policy.of(c).maxAttempts());
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

    /**
     * Every class, its attempts ending the way they do in the service (see {@link #end}; for CRASH a
     * lease that runs out while the job ran alone), retries below its own limit and is quarantined at it.
     */
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
            Ended ended = end(decisions, record, c, now, random);
            Disposition d = ended.disposition();
            now = ended.at();
            assertEquals(failure, d.next().failuresOf(c), c + " failure " + failure + " is counted against " + c);
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

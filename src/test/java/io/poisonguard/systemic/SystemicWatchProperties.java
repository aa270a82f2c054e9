package io.poisonguard.systemic;

import io.poisonguard.failure.FailureClass;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The trip rules over whole runs of outcomes. Each property states, without the watch's own
 * bookkeeping, which outcome must trip it, and checks every ruling against that.
 */
class SystemicWatchProperties {
    static final Instant T0 = Instant.parse("2026-05-01T08:00:00Z");
    static final Duration WINDOW = Duration.ofMinutes(1);
    /** Longer than any run below, so no probe falls due inside it. */
    static final Duration PROBE = Duration.ofDays(1);

    record Failure(Signature signature, String jobId) {
    }

    @Provide
    Arbitrary<List<Failure>> failures() {
        Arbitrary<Signature> signatures = Arbitraries.of(
                new Signature(FailureClass.PERMANENT, "IllegalArgumentException", "Provider.standing"),
                new Signature(FailureClass.TRANSIENT, "TransientFailure", "Provider.standing"),
                new Signature(FailureClass.PERMANENT, "IllegalArgumentException", "Report.render"));
        Arbitrary<String> jobs = Arbitraries.integers().between(0, 6).map(i -> "job-" + i);
        return Combinators.combine(signatures, jobs).as(Failure::new).list().ofMaxSize(40);
    }

    /** Distinct jobs in the run of one signature that ends at {@code end}, counted backwards from it. */
    static int distinctJobsInRunEndingAt(List<Failure> failures, int end) {
        Signature signature = failures.get(end).signature();
        Set<String> jobs = new HashSet<>();
        for (int i = end; i >= 0 && failures.get(i).signature().equals(signature); i--) {
            jobs.add(failures.get(i).jobId());
        }
        return jobs.size();
    }

    /**
     * With threshold N and no successes, the failure that completes a run of N distinct jobs with one
     * signature trips the watch and is held; every failure before it is charged (so no run ever has
     * more than N-1 distinct jobs charged), and every failure after it is held without a second trip.
     */
    @Property(tries = 500)
    void theFailureThatCompletesARunOfNDistinctJobsTripsTheWatchAndNoneBeforeItDoes(
            @ForAll @IntRange(min = 2, max = 5) int threshold, @ForAll("failures") List<Failure> failures) {
        SystemicWatch watch = new SystemicWatch(threshold, 1_000, WINDOW, PROBE);
        boolean tripped = false;

        for (int i = 0; i < failures.size(); i++) {
            Failure f = failures.get(i);
            Instant now = T0.plusSeconds(i);
            SystemicWatch.Ruling ruling = watch.failed(f.signature(), "permit-report", f.jobId(), now);
            if (tripped) {
                assertTrue(ruling.hold() && ruling.tripped().isEmpty(), "failure " + i + " after the trip is held, trips nothing new");
            } else if (distinctJobsInRunEndingAt(failures, i) >= threshold) {
                assertTrue(ruling.hold(), "failure " + i + " completes a run of " + threshold + " distinct jobs: held");
                SystemicWatch.Trip trip = ruling.tripped().orElseThrow(() -> new AssertionError("failure completing the run trips"));
                assertEquals(f.signature(), trip.signature());
                assertEquals(Math.min(threshold, SystemicWatch.SAMPLE), trip.sampleJobIds().size());
                assertEquals(f.jobId(), trip.sampleJobIds().getLast(), "the tripping job is in the sample");
                tripped = true;
            } else {
                assertFalse(ruling.hold(), "failure " + i + " is charged: its run has fewer than " + threshold + " distinct jobs");
                assertTrue(ruling.tripped().isEmpty());
            }
            assertEquals(tripped ? SystemicWatch.Admit.PAUSED : SystemicWatch.Admit.OPEN, watch.admit(now));
        }
    }

    /**
     * With at most {@code max} quarantines a window, the first quarantine that finds more than
     * {@code max} within the window ending at it (older ones excluded) trips the watch; none before it does.
     */
    @Property(tries = 500)
    void theFirstQuarantineBeyondTheLimitWithinTheWindowTripsTheWatch(
            @ForAll @IntRange(min = 1, max = 4) int max,
            @ForAll("quarantineGaps") List<Integer> gapsInSeconds) {
        SystemicWatch watch = new SystemicWatch(1_000, max, WINDOW, PROBE);
        List<Instant> times = new java.util.ArrayList<>();
        Instant now = T0;
        boolean tripped = false;

        for (int i = 0; i < gapsInSeconds.size(); i++) {
            now = now.plusSeconds(gapsInSeconds.get(i));
            times.add(now);
            Instant windowStart = now.minus(WINDOW);
            long inWindow = times.stream().filter(t -> t.isAfter(windowStart)).count();
            SystemicWatch.Ruling ruling = watch.quarantining("job-" + i, now);
            if (tripped) {
                assertTrue(ruling.hold() && ruling.tripped().isEmpty(), "quarantine " + i + " after the trip is held");
            } else if (inWindow > max) {
                assertTrue(ruling.hold(), "quarantine " + i + " is number " + inWindow + " within the window: held");
                assertTrue(ruling.tripped().isPresent(), "quarantine " + i + " trips the watch");
                tripped = true;
            } else {
                assertFalse(ruling.hold(), "quarantine " + i + " is number " + inWindow + " within the window, limit " + max);
                assertTrue(ruling.tripped().isEmpty());
            }
        }
    }

    @Provide
    Arbitrary<List<Integer>> quarantineGaps() {
        return Arbitraries.integers().between(0, 90).list().ofMaxSize(30);
    }
}

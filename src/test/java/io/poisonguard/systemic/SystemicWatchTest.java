package io.poisonguard.systemic;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.systemic.SystemicWatch.Admit;
import io.poisonguard.systemic.SystemicWatch.Ruling;
import io.poisonguard.systemic.SystemicWatch.Trip;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The systemic-failure guard's rules: when it trips, what it holds, and how consumption resumes. */
class SystemicWatchTest {
    static final Instant T0 = Instant.parse("2026-05-01T08:00:00Z");
    static final Duration WINDOW = Duration.ofMinutes(1);
    static final Duration PROBE = Duration.ofSeconds(30);
    static final Signature BAD_SETTING = new Signature(FailureClass.PERMANENT, "IllegalArgumentException", "Provider.standing");
    static final Signature UPSTREAM_503 = new Signature(FailureClass.TRANSIENT, "TransientFailure", "Provider.standing");
    /** The job type most tests' jobs are of, and two others the same worker runs. */
    static final String REPORTS = "permit-report";
    static final String INVOICES = "invoice";
    static final String RECEIPTS = "receipt";

    /** Trips on 3 distinct jobs in a row with one signature, or on more than 2 quarantines a minute; probes every 30 s. */
    final SystemicWatch watch = new SystemicWatch(3, 2, WINDOW, PROBE);

    static void assertCharged(Ruling ruling, String what) {
        assertFalse(ruling.hold(), what + " is charged to its job");
        assertTrue(ruling.tripped().isEmpty(), what + " trips nothing");
    }

    static Trip assertTripped(Ruling ruling, String what) {
        assertTrue(ruling.hold(), what + " trips the watch and is held, not charged");
        return ruling.tripped().orElseThrow(() -> new AssertionError(what + " should name the trip"));
    }

    static void assertHeldWithoutNewTrip(Ruling ruling, String what) {
        assertTrue(ruling.hold(), what + " is held while tripped");
        assertTrue(ruling.tripped().isEmpty(), what + " does not trip the watch again");
    }

    /** Trips the watch at {@code at} with three distinct jobs failing with {@link #BAD_SETTING}. */
    private Trip tripAt(Instant at) {
        watch.failed(BAD_SETTING, REPORTS, "trip-a", at);
        watch.failed(BAD_SETTING, REPORTS, "trip-b", at);
        return assertTripped(watch.failed(BAD_SETTING, REPORTS, "trip-c", at), "the third distinct job");
    }

    @Test
    void threeDistinctJobsFailingInARowWithOneSignatureTripItAndOnlyTheFirstTwoAreCharged() {
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-1", T0), "the first failure");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-2", T0.plusSeconds(1)), "the second distinct job's failure");
        assertEquals(Admit.OPEN, watch.admit(T0.plusSeconds(1)));

        Trip trip = assertTripped(watch.failed(BAD_SETTING, REPORTS, "job-3", T0.plusSeconds(2)), "the third distinct job's failure");

        assertEquals(BAD_SETTING, trip.signature());
        assertEquals(List.of("job-1", "job-2", "job-3"), trip.sampleJobIds());
        assertEquals(T0.plusSeconds(2), trip.at());
        assertTrue(trip.cause().contains("3 distinct jobs"), trip.cause());
        assertEquals(trip, watch.trip().orElseThrow());
        assertEquals(Admit.PAUSED, watch.admit(T0.plusSeconds(2)));
    }

    @Test
    void theTripSamplesOnlyTheNewestJobsOfALongStreak() {
        SystemicWatch seven = new SystemicWatch(7, 2, WINDOW, PROBE);
        for (int i = 1; i < 7; i++) {
            assertCharged(seven.failed(BAD_SETTING, REPORTS, "job-" + i, T0), "failure " + i + " of 7");
        }

        Trip trip = assertTripped(seven.failed(BAD_SETTING, REPORTS, "job-7", T0), "the seventh distinct job's failure");

        assertEquals(List.of("job-3", "job-4", "job-5", "job-6", "job-7"), trip.sampleJobIds());
    }

    @Test
    void retriesOfTheSameJobDoNotAdvanceTheStreak() {
        for (int retry = 0; retry < 5; retry++) {
            assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-1", T0.plusSeconds(retry)), "retry " + retry + " of job-1");
        }
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-2", T0.plusSeconds(6)), "job-2, the second distinct job");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-1", T0.plusSeconds(7)), "job-1 once more");
        assertTrue(watch.trip().isEmpty(), "five failures of two jobs are not systemic");

        assertTripped(watch.failed(BAD_SETTING, REPORTS, "job-3", T0.plusSeconds(8)), "job-3, the third distinct job");
    }

    @Test
    void aFailureWithADifferentSignatureStartsTheStreakAfresh() {
        watch.failed(BAD_SETTING, REPORTS, "job-1", T0);
        watch.failed(BAD_SETTING, REPORTS, "job-2", T0);

        assertCharged(watch.failed(UPSTREAM_503, REPORTS, "job-3", T0), "a failure with another signature");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-4", T0), "the first of a new streak");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-5", T0), "the second of the new streak");
        assertTripped(watch.failed(BAD_SETTING, REPORTS, "job-6", T0), "the third of the new streak");
    }

    @Test
    void aSuccessBreaksTheStreak() {
        watch.failed(BAD_SETTING, REPORTS, "job-1", T0);
        watch.failed(BAD_SETTING, REPORTS, "job-2", T0);

        assertFalse(watch.succeeded(REPORTS, T0.plusSeconds(1)), "a success while not tripped resumes nothing");

        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-3", T0.plusSeconds(2)), "the first failure after the success");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "job-4", T0.plusSeconds(2)), "the second failure after the success");
        assertTripped(watch.failed(BAD_SETTING, REPORTS, "job-5", T0.plusSeconds(2)), "the third failure after the success");
    }

    @Test
    void successesOfAnotherJobTypeDoNotBreakTheRow() {
        // A bad deploy broke the reports' handler; the invoices' handler is fine, and its jobs interleave with the reports'.
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-1", T0), "the first report's failure");
        assertFalse(watch.succeeded(INVOICES, T0), "an invoice's success");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-2", T0), "the second report's failure");
        assertFalse(watch.succeeded(INVOICES, T0), "another invoice's success");

        Trip trip = assertTripped(watch.failed(BAD_SETTING, REPORTS, "report-3", T0), "the third report's failure");
        assertEquals(List.of("report-1", "report-2", "report-3"), trip.sampleJobIds());
    }

    @Test
    void aFailureOfAnotherJobTypeWithAnotherSignatureDoesNotBreakTheRow() {
        watch.failed(BAD_SETTING, REPORTS, "report-1", T0);
        assertCharged(watch.failed(UPSTREAM_503, INVOICES, "invoice-1", T0), "an invoice's own upstream failing");
        watch.failed(BAD_SETTING, REPORTS, "report-2", T0);

        assertTripped(watch.failed(BAD_SETTING, REPORTS, "report-3", T0), "the third report's failure");
    }

    @Test
    void oneSignatureAcrossJobTypesIsOneRow() {
        // A setting every handler reads is broken: each type fails the same way.
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-1", T0), "a report's failure");
        assertCharged(watch.failed(BAD_SETTING, INVOICES, "invoice-1", T0), "an invoice's failure with the same signature");

        assertTripped(watch.failed(BAD_SETTING, RECEIPTS, "receipt-1", T0), "a receipt's, the third distinct job");
    }

    @Test
    void aSuccessOfAnyJobTypeInTheRowBreaksIt() {
        watch.failed(BAD_SETTING, REPORTS, "report-1", T0);
        watch.failed(BAD_SETTING, INVOICES, "invoice-1", T0);

        watch.succeeded(INVOICES, T0.plusSeconds(1));

        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-2", T0.plusSeconds(2)), "the first failure after the invoice's success");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-3", T0.plusSeconds(2)), "the second");
        assertTripped(watch.failed(BAD_SETTING, REPORTS, "report-4", T0.plusSeconds(2)), "the third");
    }

    @Test
    void aSignatureSeenLongAgoAmongManyOthersIsForgotten() {
        watch.failed(BAD_SETTING, REPORTS, "report-1", T0);
        watch.failed(BAD_SETTING, REPORTS, "report-2", T0);
        // As many rows again, each of a type of its own, one failure each: the reports' row is the oldest, and is dropped.
        for (int i = 0; i < SystemicWatch.MAX_ROWS; i++) {
            assertCharged(watch.failed(new Signature(FailureClass.PERMANENT, "E" + i, "Somewhere"), "type-" + i, "job-" + i, T0),
                    "row " + i);
        }

        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-3", T0), "the reports' third failure, in a row started again");
    }

    @Test
    void moreQuarantinesThanTheLimitWithinTheWindowTripIt() {
        assertCharged(watch.quarantining("job-1", T0), "the first quarantine");
        assertCharged(watch.quarantining("job-2", T0.plusSeconds(20)), "the second quarantine");

        Trip trip = assertTripped(watch.quarantining("job-3", T0.plusSeconds(40)), "the third quarantine within a minute");

        assertNull(trip.signature(), "a rate trip has no signature");
        assertEquals(List.of("job-3"), trip.sampleJobIds());
        assertTrue(trip.cause().contains("3 quarantines within 60s (limit 2)"), trip.cause());
        assertEquals(Admit.PAUSED, watch.admit(T0.plusSeconds(40)));
    }

    @Test
    void quarantinesOlderThanTheWindowSlideOut() {
        watch.quarantining("job-1", T0);
        watch.quarantining("job-2", T0.plusSeconds(30));

        assertCharged(watch.quarantining("job-3", T0.plus(WINDOW)), "a quarantine exactly one window after the first");
        assertCharged(watch.quarantining("job-4", T0.plusSeconds(91)), "a quarantine after the second slid out too");
        assertTrue(watch.trip().isEmpty());

        assertTripped(watch.quarantining("job-5", T0.plusSeconds(100)), "the third quarantine within the last minute");
    }

    @Test
    void whileTrippedEveryFailureAndQuarantineIsHeldAndTheFirstTripStands() {
        Trip trip = tripAt(T0);

        assertHeldWithoutNewTrip(watch.failed(UPSTREAM_503, REPORTS, "other-1", T0.plusSeconds(1)), "a failure with another signature");
        assertHeldWithoutNewTrip(watch.failed(BAD_SETTING, REPORTS, "trip-a", T0.plusSeconds(2)), "a retry of a tripping job");
        for (int i = 0; i < 5; i++) {
            assertHeldWithoutNewTrip(watch.quarantining("q-" + i, T0.plusSeconds(3)), "quarantine " + i);
        }

        assertEquals(trip, watch.trip().orElseThrow());
    }

    @Test
    void admitIsPausedUntilTheProbeIntervalHasPassedThenLetsAProbeThrough() {
        tripAt(T0);

        assertEquals(Admit.PAUSED, watch.admit(T0));
        assertEquals(Admit.PAUSED, watch.admit(T0.plus(PROBE).minusMillis(1)));
        assertEquals(Admit.PROBE, watch.admit(T0.plus(PROBE)));
        assertEquals(Admit.PROBE, watch.admit(T0.plus(PROBE).plusSeconds(5)), "the probe stays due until one reports");
    }

    @Test
    void aFailedProbePushesTheNextProbeAWholeIntervalLater() {
        tripAt(T0);
        Instant probeFailed = T0.plus(PROBE).plusSeconds(4);

        assertHeldWithoutNewTrip(watch.failed(BAD_SETTING, REPORTS, "probe-1", probeFailed), "the failed probe");

        assertEquals(Admit.PAUSED, watch.admit(probeFailed));
        assertEquals(Admit.PAUSED, watch.admit(probeFailed.plus(PROBE).minusMillis(1)));
        assertEquals(Admit.PROBE, watch.admit(probeFailed.plus(PROBE)));
    }

    @Test
    void aProbeQuarantinedAtIntakeIsAFailedProbeSoTheBacklogDoesNotDrainIntoQuarantine() {
        // A bad deploy makes every job fail its pre-flight (no handler for its type): each is quarantined at intake,
        // which neither fails nor succeeds an attempt. The probe must count as failed, or the next one is due at once.
        tripAt(T0);
        Instant probeQuarantined = T0.plus(PROBE).plusSeconds(1);

        assertHeldWithoutNewTrip(watch.quarantining("probe-1", probeQuarantined), "the probe quarantined at intake");

        assertEquals(Admit.PAUSED, watch.admit(probeQuarantined.plusSeconds(1)), "no second probe right after the first");
        assertEquals(Admit.PROBE, watch.admit(probeQuarantined.plus(PROBE)));
    }

    @Test
    void quarantinesBeforeTheProbeIsDueDoNotPostponeIt() {
        tripAt(T0);

        watch.quarantining("in-flight-at-trip", T0.plusSeconds(10));

        assertEquals(Admit.PROBE, watch.admit(T0.plus(PROBE)));
    }

    @Test
    void failuresHeldBeforeTheProbeIsDueDoNotPostponeIt() {
        tripAt(T0);

        watch.failed(BAD_SETTING, REPORTS, "in-flight-at-trip", T0.plusSeconds(10));

        assertEquals(Admit.PROBE, watch.admit(T0.plus(PROBE)));
    }

    @Test
    void aSuccessAtProbeTimeClearsTheTrip() {
        tripAt(T0);

        assertTrue(watch.succeeded(REPORTS, T0.plus(PROBE)), "the probe's success resumes consumption");

        assertTrue(watch.trip().isEmpty());
        assertEquals(Admit.OPEN, watch.admit(T0.plus(PROBE)));
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "after-1", T0.plus(PROBE)), "the first failure after the resume");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "after-2", T0.plus(PROBE)), "the second failure after the resume");
    }

    @Test
    void aProbeOfAnyJobTypeResumesSoATypeWhoseJobsStoppedComingCannotHoldTheWorkerForGood() {
        Trip trip = tripAt(T0);
        assertEquals(List.of(REPORTS), trip.jobTypes());

        assertTrue(watch.succeeded(INVOICES, T0.plus(PROBE)), "an invoice's success at probe time resumes consumption");

        // The reports' handler is still broken: its next row trips the watch again.
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-after-1", T0.plus(PROBE)), "the first report after the resume");
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "report-after-2", T0.plus(PROBE)), "the second");
        assertTripped(watch.failed(BAD_SETTING, REPORTS, "report-after-3", T0.plus(PROBE)), "the third");
    }

    @Test
    void aTripNamesEveryJobTypeInItsRowAndAQuarantineRateTripNone() {
        watch.failed(BAD_SETTING, REPORTS, "report-1", T0);
        watch.failed(BAD_SETTING, INVOICES, "invoice-1", T0);
        Trip trip = assertTripped(watch.failed(BAD_SETTING, REPORTS, "report-2", T0), "the third distinct job");
        assertEquals(List.of(INVOICES, REPORTS), trip.jobTypes());

        SystemicWatch rate = new SystemicWatch(3, 2, WINDOW, PROBE);
        for (int i = 1; i <= 3; i++) {
            rate.quarantining("job-" + i, T0);
        }
        assertEquals(List.of(), rate.trip().orElseThrow().jobTypes());
    }

    @Test
    void aSuccessBeforeTheProbeIsDueDoesNotClearTheTrip() {
        tripAt(T0);

        assertFalse(watch.succeeded(REPORTS, T0.plusSeconds(10)), "a job in flight at the trip that then succeeds is no probe");

        assertTrue(watch.trip().isPresent());
        assertEquals(Admit.PAUSED, watch.admit(T0.plusSeconds(10)));
    }

    @Test
    void resumeClearsATripAndReportsThatThereWasOne() {
        tripAt(T0);

        assertTrue(watch.resume(), "it was tripped");

        assertTrue(watch.trip().isEmpty());
        assertEquals(Admit.OPEN, watch.admit(T0.plusSeconds(1)));
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "after-1", T0.plusSeconds(1)), "the first failure after the resume");
        assertCharged(watch.quarantining("after-1", T0.plusSeconds(1)), "the first quarantine after the resume");
        assertCharged(watch.quarantining("after-2", T0.plusSeconds(1)), "the second quarantine after the resume");
    }

    @Test
    void aResumeOnAnotherWorkerClearsOnlyATripFromBeforeIt() {
        tripAt(T0);

        assertFalse(watch.resumedElsewhere(T0.minusSeconds(5)), "a resume from before the trip (an earlier fault's)");
        assertFalse(watch.resumedElsewhere(T0), "a resume at the very instant of the trip");
        assertEquals(Admit.PAUSED, watch.admit(T0.plusSeconds(1)));

        assertTrue(watch.resumedElsewhere(T0.plusSeconds(2)), "a resume after the trip clears it");
        assertTrue(watch.trip().isEmpty());
        assertEquals(Admit.OPEN, watch.admit(T0.plusSeconds(3)));
        assertCharged(watch.failed(BAD_SETTING, REPORTS, "after-1", T0.plusSeconds(3)), "the first failure after the resume");
        assertFalse(watch.resumedElsewhere(T0.plusSeconds(4)), "nothing to clear when not tripped");
    }

    @Test
    void resumeWhenNotTrippedReportsSoAndChangesNothing() {
        assertFalse(watch.resume());
        assertEquals(Admit.OPEN, watch.admit(T0));
    }

    @Test
    void theConstructorRefusesSettingsThatCouldNotWork() {
        refused(() -> new SystemicWatch(1, 2, WINDOW, PROBE), "sameSignature");
        refused(() -> new SystemicWatch(3, 0, WINDOW, PROBE), "maxQuarantines");
        refused(() -> new SystemicWatch(3, 2, Duration.ZERO, PROBE), "window");
        refused(() -> new SystemicWatch(3, 2, Duration.ofSeconds(-1), PROBE), "window");
        refused(() -> new SystemicWatch(3, 2, WINDOW, Duration.ZERO), "probeInterval");
        refused(() -> new SystemicWatch(3, 2, WINDOW, Duration.ofSeconds(-1)), "probeInterval");
    }

    @Test
    void theSmallestSettingsAreAccepted() {
        SystemicWatch smallest = new SystemicWatch(2, 1, Duration.ofMillis(1), Duration.ofMillis(1));

        assertCharged(smallest.failed(BAD_SETTING, REPORTS, "job-1", T0), "the first failure");
        assertTripped(smallest.failed(BAD_SETTING, REPORTS, "job-2", T0), "the second distinct job's failure");
    }

    private static void refused(Executable construct, String argument) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, construct);
        assertTrue(e.getMessage().contains(argument), "the message names " + argument + ": " + e.getMessage());
    }
}

package io.poisonguard.disposition;

import io.poisonguard.failure.Failure;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Jitter;
import io.poisonguard.ladder.Ladder;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static io.poisonguard.disposition.Policies.LEASE;
import static io.poisonguard.disposition.Policies.policy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DecisionsTest {
    private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");
    private static final String WORKER = "worker-a";
    private static final String OTHER_WORKER = "worker-b";

    private final Random random = new Random(42);

    private static LedgerRecord fresh() {
        return LedgerRecord.fresh("job-1", "acme", "permit-report", 1, NOW);
    }

    private LedgerRecord run(Decisions decisions, LedgerRecord record, Instant at) {
        Intake intake = decisions.intake(record, Optional.empty(), 1, at, WORKER, random);
        return assertInstanceOf(Intake.Run.class, intake, "expected the job to run").next();
    }

    private Disposition fail(Decisions decisions, LedgerRecord running, FailureClass c, Instant at) {
        return decisions.failed(running, new Failure(c, "BoomException", "boom " + c), at, random);
    }

    @Test
    void aDeadLetterCopyOfADroppedDisposableJobIsDeletedNotQuarantined() {
        // Poison of a disposable job type is dropped by design: no record, no alert. A copy of it that SQS's redrive moved to
        // the DLQ must not be turned into the quarantine the job type opted out of (a record nothing can replay, a page).
        LedgerRecord dropped = fresh().moveTo(JobState.QUARANTINED, NOW).moveTo(JobState.DROPPED, NOW);

        Adoption adoption = policy().decisions().adopt(dropped, 1, 12, 100, 0, NOW.plusSeconds(60));

        assertInstanceOf(Adoption.Finished.class, adoption, "a dropped job's copy is a leftover");
    }

    @Test
    void aCopyTheRedriveBackstopMovedOfAJobItsLedgerStillTracksGoesBackNotIntoQuarantine() {
        Decisions decisions = policy().decisions();
        // Waiting for its next attempt, its give-backs uncounted: SQS's count says nothing about the job.
        LedgerRecord waiting = fresh().moveTo(JobState.RETRY_WAIT, NOW);
        assertInstanceOf(Adoption.GiveBack.class, decisions.adopt(waiting, 1, 100, 100, 0, NOW.plusSeconds(60)));
        // An attempt whose lease ran out: the next intake charges that crash, as it would on the main queue.
        LedgerRecord lapsed = fresh().moveTo(JobState.ACTIVE, NOW).withLease(WORKER, NOW.plusSeconds(30));
        assertInstanceOf(Adoption.GiveBack.class, decisions.adopt(lapsed, 1, 101, 100, 0, NOW.plusSeconds(60)));
        // Still leased: later, as before.
        assertInstanceOf(Adoption.Busy.class, decisions.adopt(lapsed, 1, 101, 100, 0, NOW.plusSeconds(10)));
    }

    @Test
    void aCopyTheBackstopKeepsMovingAfterItWasSentBackThreeTimesIsQuarantined() {
        // Every receive of it fails before the ledger (it kills the worker in pre-flight, say): round trips end.
        Decisions decisions = policy().decisions();
        LedgerRecord waiting = fresh().moveTo(JobState.RETRY_WAIT, NOW);
        assertInstanceOf(Adoption.GiveBack.class, decisions.adopt(waiting, 1, 100, 100, Decisions.MAX_DEAD_LETTER_RETURNS - 1, NOW));
        Adoption again = decisions.adopt(waiting, 1, 100, 100, Decisions.MAX_DEAD_LETTER_RETURNS, NOW);
        LedgerRecord next = assertInstanceOf(Adoption.Quarantine.class, again).next();
        assertEquals(FailureClass.REDRIVEN, next.quarantineClass());
        assertTrue(next.quarantineReason().contains("sent back to the main queue 3 times"), next.quarantineReason());
    }

    @Test
    void onlyReturnsAfterWhichTheLedgerStayedAsItWasCount() {
        LedgerRecord waiting = fresh().moveTo(JobState.RETRY_WAIT, NOW).withVersion(17);
        assertEquals(2, Decisions.countedReturns(Optional.of(Decisions.deadLetterReturns(2, waiting)), waiting));
        // A long outage: the copy reached the ledger between two trips (a hold, a release was written): none count.
        LedgerRecord since = waiting.withVersion(18);
        assertEquals(0, Decisions.countedReturns(Optional.of(Decisions.deadLetterReturns(2, waiting)), since));
        assertEquals(0, Decisions.countedReturns(Optional.empty(), waiting));
        assertEquals(0, Decisions.countedReturns(Optional.of("lots"), waiting), "a value the service did not write counts for nothing");
        assertEquals(0, Decisions.countedReturns(Optional.of("3"), waiting), "nor one without the version it was counted at");
    }

    @Test
    void aCopyMovedByHandOrOfAJobTheLedgerNeverSawIsStillQuarantinedAsRedriven() {
        Decisions decisions = policy().decisions();
        LedgerRecord waiting = fresh().moveTo(JobState.RETRY_WAIT, NOW);
        // Received fewer times than the backstop: an operator moved it, and means it.
        Adoption byHand = decisions.adopt(waiting, 1, 3, 100, 0, NOW.plusSeconds(60));
        assertEquals(FailureClass.REDRIVEN, assertInstanceOf(Adoption.Quarantine.class, byHand).next().quarantineClass());
        // Never recorded in 100 receives: whatever stops the service before its first write is what the backstop is for.
        Adoption unseen = decisions.adopt(LedgerRecord.fresh("never-seen", "tenant-a", "permit-report", 1, NOW), 1, 100, 100, 0, NOW);
        assertInstanceOf(Adoption.Quarantine.class, unseen);
    }

    @Test
    void aDeadLetterCopyOfAQuarantinedJobIsOneOfItsCopies() {
        LedgerRecord quarantined = fresh().moveTo(JobState.QUARANTINED, NOW);

        assertInstanceOf(Adoption.AlreadyParked.class, policy().decisions().adopt(quarantined, 1, 12, 100, 0, NOW.plusSeconds(60)));
    }

    @Test
    void aNewJobRunsAsAttemptOneUnderALeaseWithARunningHistoryEntry() {
        Intake intake = policy().decisions().intake(fresh(), Optional.empty(), 1, NOW, WORKER, random);

        LedgerRecord next = assertInstanceOf(Intake.Run.class, intake).next();
        assertEquals(1, next.attempt());
        assertEquals(JobState.ACTIVE, next.state());
        assertEquals(WORKER, next.leaseOwner());
        assertEquals(NOW.plus(LEASE), next.leaseUntil());
        assertEquals(1, next.history().size());
        AttemptEntry entry = next.currentEntry();
        assertEquals(AttemptOutcome.RUNNING, entry.outcome());
        assertEquals(1, entry.number());
        assertEquals(1, entry.generation());
        assertEquals(WORKER, entry.worker());
        assertEquals(NOW, entry.startedAt());
        assertNull(entry.endedAt());
    }

    @Test
    void aSuccessCompletesTheJobReleasesTheLeaseAndKeepsTheRecordForTheGivenTime() {
        Decisions decisions = policy().decisions();
        LedgerRecord running = run(decisions, fresh(), NOW);

        Disposition done = decisions.succeeded(running, NOW.plusSeconds(5), Duration.ofDays(7));

        LedgerRecord next = assertInstanceOf(Disposition.Complete.class, done).next();
        assertEquals(JobState.SUCCEEDED, next.state());
        assertNull(next.leaseOwner());
        assertNull(next.leaseUntil());
        assertEquals(NOW.plusSeconds(5).plus(Duration.ofDays(7)), next.expiresAt());
        assertEquals(AttemptOutcome.SUCCEEDED, next.currentEntry().outcome());
        assertEquals(NOW.plusSeconds(5), next.currentEntry().endedAt());
    }

    /**
     * A replayed job's earlier generations may still have copies in the dead-letter queue (a copy the replay's clean-up
     * missed or could not delete), and SQS keeps a message up to 14 days. Its success is kept at least that long, so
     * such a copy moved back to the main queue meets the record and is dropped as stale, instead of finding no record
     * after {@code retention.succeeded} (7 days) and running the job a second time.
     */
    @Test
    void aReplayedJobsSuccessIsKeptAsLongAsAnEarlierGenerationsCopyCanLiveInTheDeadLetterQueue() {
        Decisions decisions = policy().decisions();
        LedgerRecord replayed = run(decisions, LedgerRecord.fresh("job-1", "acme", "permit-report", 2, NOW), NOW);

        LedgerRecord done = decisions.succeeded(replayed, NOW.plusSeconds(5), Duration.ofDays(7)).next();

        assertTrue(!done.expiresAt().isBefore(NOW.plusSeconds(5).plus(Duration.ofDays(14))),
                "kept until " + done.expiresAt() + ", less than SQS keeps a dead-letter copy");
        Intake copy = decisions.intake(done, Optional.empty(), 1, NOW.plus(Duration.ofDays(13)), OTHER_WORKER, random);
        assertInstanceOf(Intake.StaleGeneration.class, copy);
        // A first generation has no copy of an earlier one: its record keeps the configured time.
        LedgerRecord first = decisions.succeeded(run(decisions, fresh(), NOW), NOW.plusSeconds(5), Duration.ofDays(7)).next();
        assertEquals(NOW.plusSeconds(5).plus(Duration.ofDays(7)), first.expiresAt());
    }

    @Test
    void aCopyOfASucceededJobIsNotRunAgain() {
        Decisions decisions = policy().decisions();
        LedgerRecord done = decisions.succeeded(run(decisions, fresh(), NOW), NOW.plusSeconds(1), Duration.ofDays(7)).next();

        Intake intake = decisions.intake(done, Optional.empty(), 1, NOW.plusSeconds(2), OTHER_WORKER, random);

        assertEquals(done, assertInstanceOf(Intake.AlreadySucceeded.class, intake).current());
    }

    @Test
    void aCopyOfAQuarantinedJobIsNeverRunEvenLongAfterAnyLeaseExpired() {
        Decisions decisions = policy().limit(FailureClass.PERMANENT, 1).decisions();
        LedgerRecord quarantined = fail(decisions, run(decisions, fresh(), NOW), FailureClass.PERMANENT, NOW).next();

        Intake intake = decisions.intake(quarantined, Optional.empty(), 1, NOW.plus(Duration.ofDays(3)), OTHER_WORKER, random);

        assertEquals(quarantined, assertInstanceOf(Intake.AlreadyQuarantined.class, intake).current());
    }

    @Test
    void aCopyOfAParkedJobFromAnEarlierGenerationIsForwardedToTheDeadLetterQueueNotDroppedAsStale() {
        Decisions decisions = policy().limit(FailureClass.PERMANENT, 1).decisions();
        LedgerRecord quarantined = fail(decisions, run(decisions, fresh(), NOW), FailureClass.PERMANENT, NOW).next();
        LedgerRecord replayed = quarantined.replayed(NOW.plusSeconds(10));
        LedgerRecord running = assertInstanceOf(Intake.Run.class,
                decisions.intake(replayed, Optional.empty(), 2, NOW.plusSeconds(11), WORKER, random)).next();
        LedgerRecord quarantinedAgain = fail(decisions, running, FailureClass.PERMANENT, NOW.plusSeconds(12)).next();

        for (JobState parked : List.of(JobState.QUARANTINED, JobState.RESOLVED, JobState.UNRECOVERABLE)) {
            LedgerRecord current = parked == JobState.QUARANTINED ? quarantinedAgain : quarantinedAgain.moveTo(parked, NOW.plusSeconds(13));
            Intake intake = decisions.intake(current, Optional.empty(), 1, NOW.plusSeconds(20), OTHER_WORKER, random);
            assertEquals(current, assertInstanceOf(Intake.AlreadyQuarantined.class, intake, parked.name()).current());
        }
    }

    @Test
    void anEarlierGenerationsCopyOfAReplayedJobThatIsRunningOrDoneIsDroppedAsStale() {
        Decisions decisions = policy().limit(FailureClass.PERMANENT, 1).decisions();
        LedgerRecord quarantined = fail(decisions, run(decisions, fresh(), NOW), FailureClass.PERMANENT, NOW).next();
        LedgerRecord replayed = quarantined.replayed(NOW.plusSeconds(10));
        LedgerRecord running = assertInstanceOf(Intake.Run.class,
                decisions.intake(replayed, Optional.empty(), 2, NOW.plusSeconds(11), WORKER, random)).next();
        LedgerRecord done = decisions.succeeded(running, NOW.plusSeconds(12), Duration.ofDays(7)).next();

        for (LedgerRecord current : List.of(running, done)) {
            Intake intake = decisions.intake(current, Optional.empty(), 1, NOW.plusSeconds(13), OTHER_WORKER, random);
            assertEquals(1, assertInstanceOf(Intake.StaleGeneration.class, intake, current.state().name()).messageGeneration());
        }
    }

    /**
     * While a replay is under way (REPLAYING: it has moved the ledger and is still looking in the vault and the DLQ), an
     * earlier generation's copy may be the only payload left, and the replay may yet conclude the job UNRECOVERABLE: the
     * copy waits, on the main queue and in the DLQ. It used to be deleted as stale, and the replay then found nothing.
     */
    @Test
    void anEarlierGenerationsCopyWaitsWhileItsJobsReplayIsUnderWay() {
        Decisions decisions = policy().limit(FailureClass.PERMANENT, 1).decisions();
        LedgerRecord quarantined = fail(decisions, run(decisions, fresh(), NOW), FailureClass.PERMANENT, NOW).next();
        LedgerRecord replaying = quarantined.replayed(NOW.plusSeconds(10));

        Intake intake = decisions.intake(replaying, Optional.empty(), 1, NOW.plusSeconds(11), OTHER_WORKER, random);
        assertEquals(Decisions.REPLAY_WAIT, assertInstanceOf(Intake.ReplayUnderWay.class, intake).retryIn());
        assertInstanceOf(Adoption.Busy.class, decisions.adopt(replaying, 1, 3, 100, 0, NOW.plusSeconds(11)),
                "its orphan in the DLQ stays too");
    }

    @Test
    void aCopyOfAJobLeasedByAnotherWorkerWaitsForTheRemainingLeasePlusOneSecond() {
        Decisions decisions = policy().decisions();
        LedgerRecord running = run(decisions, fresh(), NOW);

        Intake intake = decisions.intake(running, Optional.empty(), 1, NOW.plusSeconds(20), OTHER_WORKER, random);

        Intake.ActiveElsewhere elsewhere = assertInstanceOf(Intake.ActiveElsewhere.class, intake);
        assertEquals(Duration.ofSeconds(41), elsewhere.retryIn());
        assertEquals(running, elsewhere.current());
    }

    @Test
    void anExpiredLeaseOnAnActiveJobCountsACrashAndMarksTheOpenAttemptCrashed() {
        // Attribution off: every crash counts as CRASH (CrashAttributionTest covers the lanes).
        Decisions decisions = policy().attributeCrashes(false).limit(FailureClass.CRASH, 3).decisions();
        LedgerRecord running = run(decisions, fresh(), NOW);
        Instant afterLease = running.leaseUntil().plusSeconds(1);

        Intake intake = decisions.intake(running, Optional.empty(), 1, afterLease, OTHER_WORKER, random);

        Disposition disposition = assertInstanceOf(Intake.Decided.class, intake).disposition();
        Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class, disposition);
        assertEquals(Duration.ofSeconds(10), retry.delay());
        LedgerRecord next = retry.next();
        assertEquals(1, next.failuresOf(FailureClass.CRASH));
        assertEquals(JobState.RETRY_WAIT, next.state());
        assertNull(next.leaseOwner());
        assertEquals(1, next.history().size());
        AttemptEntry crashed = next.currentEntry();
        assertEquals(1, crashed.number());
        assertEquals(AttemptOutcome.CRASHED, crashed.outcome());
        assertEquals(FailureClass.CRASH, crashed.failureClass());
        assertEquals(afterLease, crashed.endedAt());
        assertEquals(Duration.ofSeconds(10), crashed.retryDelay());
    }

    @Test
    void aCrashOnALadderWithoutDelayStartsTheNextAttemptInTheSameIntake() {
        Ladder immediate = new Ladder(Duration.ZERO, 1, Duration.ZERO, Jitter.NONE);
        Decisions decisions = policy().attributeCrashes(false).limit(FailureClass.CRASH, 3).ladder(FailureClass.CRASH, immediate).decisions();
        LedgerRecord running = run(decisions, fresh(), NOW);
        Instant afterLease = running.leaseUntil().plusSeconds(1);

        Intake intake = decisions.intake(running, Optional.empty(), 1, afterLease, OTHER_WORKER, random);

        LedgerRecord next = assertInstanceOf(Intake.Run.class, intake).next();
        assertEquals(2, next.attempt());
        assertEquals(1, next.failuresOf(FailureClass.CRASH));
        assertEquals(OTHER_WORKER, next.leaseOwner());
        assertEquals(List.of(AttemptOutcome.CRASHED, AttemptOutcome.RUNNING),
                next.history().stream().map(AttemptEntry::outcome).toList());
    }

    @Test
    void aJobThatCrashesItsWorkerEveryTimeIsQuarantinedAsCrashAndNeverRunAgain() {
        // Attribution off: every crash counts as CRASH (CrashAttributionTest covers the lanes).
        Decisions decisions = policy().attributeCrashes(false).limit(FailureClass.CRASH, 3).decisions();
        LedgerRecord record = fresh();
        Instant now = NOW;
        Disposition last = null;
        int runs = 0;
        while (runs < 10) {
            Intake intake = decisions.intake(record, Optional.empty(), 1, now, WORKER, random);
            if (intake instanceof Intake.Decided decided) {
                last = decided.disposition();
                record = last.next();
                if (last instanceof Disposition.RetryAfter retry) {
                    now = now.plus(retry.delay());
                    continue;
                }
                break;
            }
            record = assertInstanceOf(Intake.Run.class, intake).next();
            runs++;
            now = record.leaseUntil().plusMillis(1);
        }

        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class, last);
        assertEquals(3, runs);
        assertEquals(FailureClass.CRASH, quarantine.failureClass());
        assertEquals(JobState.QUARANTINED, record.state());
        assertNull(record.leaseOwner());
        assertNull(record.leaseUntil());
        assertEquals(3, record.failuresOf(FailureClass.CRASH));
        assertTrue(quarantine.reason().contains("CRASH"), quarantine.reason());
        assertTrue(quarantine.reason().contains("crashed"), quarantine.reason());
        assertInstanceOf(Intake.AlreadyQuarantined.class,
                decisions.intake(record, Optional.empty(), 1, now.plus(Duration.ofHours(1)), WORKER, random));
    }

    @Test
    void anAdmissionRejectionWithLimitOneQuarantinesAtOnceNamingTheReason() {
        Decisions decisions = policy().limit(FailureClass.ADMISSION, 1).decisions();

        Intake intake = decisions.intake(fresh(), Optional.of("body-too-large: body is 5000000 bytes"), 1, NOW, WORKER, random);

        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class,
                assertInstanceOf(Intake.Decided.class, intake).disposition());
        assertEquals(FailureClass.ADMISSION, quarantine.failureClass());
        assertTrue(quarantine.reason().contains("body-too-large"), quarantine.reason());
        LedgerRecord next = quarantine.next();
        assertEquals(JobState.QUARANTINED, next.state());
        assertEquals(FailureClass.ADMISSION, next.quarantineClass());
        assertEquals(quarantine.reason(), next.quarantineReason());
        assertEquals(1, next.attempt());
        assertNull(next.leaseOwner());
        assertEquals(AttemptOutcome.REJECTED, next.currentEntry().outcome());
    }

    @Test
    void anAdmissionRejectionBelowItsLimitWaitsOnTheAdmissionLadder() {
        Decisions decisions = policy().limit(FailureClass.ADMISSION, 3).decisions();

        Intake intake = decisions.intake(fresh(), Optional.of("unknown-schema-version"), 1, NOW, WORKER, random);

        Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class,
                assertInstanceOf(Intake.Decided.class, intake).disposition());
        assertEquals(Duration.ofSeconds(10), retry.delay());
        assertEquals(JobState.RETRY_WAIT, retry.next().state());
        assertEquals(AttemptOutcome.REJECTED, retry.next().currentEntry().outcome());
    }

    @Test
    void aPermanentFailureWithLimitThreeRetriesTwiceThenQuarantinesNamingTheClass() {
        Decisions decisions = policy().limit(FailureClass.PERMANENT, 3).decisions();
        LedgerRecord record = fresh();
        Instant now = NOW;

        Disposition first = fail(decisions, run(decisions, record, now), FailureClass.PERMANENT, now.plusSeconds(1));
        Disposition.RetryAfter firstRetry = assertInstanceOf(Disposition.RetryAfter.class, first);
        now = now.plusSeconds(1).plus(firstRetry.delay());
        Disposition second = fail(decisions, run(decisions, firstRetry.next(), now), FailureClass.PERMANENT, now.plusSeconds(1));
        Disposition.RetryAfter secondRetry = assertInstanceOf(Disposition.RetryAfter.class, second);
        now = now.plusSeconds(1).plus(secondRetry.delay());
        Disposition third = fail(decisions, run(decisions, secondRetry.next(), now), FailureClass.PERMANENT, now.plusSeconds(1));

        assertEquals(Duration.ofSeconds(10), firstRetry.delay());
        assertEquals(Duration.ofSeconds(20), secondRetry.delay());
        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class, third);
        assertEquals(FailureClass.PERMANENT, quarantine.failureClass());
        assertTrue(quarantine.reason().contains("PERMANENT"), quarantine.reason());
        assertTrue(quarantine.reason().contains("3 of 3"), quarantine.reason());
        assertTrue(quarantine.reason().contains("boom PERMANENT"), "the reason quotes the last error: " + quarantine.reason());
        assertEquals(3, quarantine.next().attempt());
        assertEquals(List.of(AttemptOutcome.FAILED, AttemptOutcome.FAILED, AttemptOutcome.FAILED),
                quarantine.next().history().stream().map(AttemptEntry::outcome).toList());
    }

    @Test
    void eachFailureClassCountsAgainstItsOwnLimit() {
        Decisions decisions = policy().limit(FailureClass.TRANSIENT, 5).limit(FailureClass.PERMANENT, 1).decisions();
        LedgerRecord record = fresh();
        Instant now = NOW;
        for (int i = 0; i < 2; i++) {
            Disposition d = fail(decisions, run(decisions, record, now), FailureClass.TRANSIENT, now);
            Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class, d, "TRANSIENT failure " + (i + 1));
            record = retry.next();
            now = now.plus(retry.delay());
        }

        Disposition d = fail(decisions, run(decisions, record, now), FailureClass.PERMANENT, now);

        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class, d);
        assertEquals(FailureClass.PERMANENT, quarantine.failureClass());
        assertEquals(2, quarantine.next().failuresOf(FailureClass.TRANSIENT));
        assertEquals(1, quarantine.next().failuresOf(FailureClass.PERMANENT));
        assertEquals(3, quarantine.next().attempt());
    }

    @Test
    void aRetryThatWouldLandPastTheCutoffQuarantinesInsteadOfDroppingTheJob() {
        Decisions decisions = policy()
                .limit(FailureClass.TRANSIENT, 100)
                .ladder(FailureClass.TRANSIENT, new Ladder(Duration.ofMinutes(10), 2, Duration.ofHours(1), Jitter.NONE))
                .cutoff(FailureClass.TRANSIENT, Duration.ofHours(1))
                .decisions();
        Instant late = NOW.plus(Duration.ofMinutes(55));
        LedgerRecord running = run(decisions, fresh(), late);

        Disposition d = fail(decisions, running, FailureClass.TRANSIENT, late);

        Disposition.Quarantine quarantine = assertInstanceOf(Disposition.Quarantine.class, d);
        assertEquals(FailureClass.TRANSIENT, quarantine.failureClass());
        assertTrue(quarantine.reason().contains("cutoff of 1h"), quarantine.reason());
        assertEquals(JobState.QUARANTINED, quarantine.next().state());
        assertEquals(FailureClass.TRANSIENT, quarantine.next().quarantineClass());
        assertNull(quarantine.next().leaseOwner());
    }

    @Test
    void aRetryThatStillLandsInsideTheCutoffWaits() {
        Decisions decisions = policy()
                .ladder(FailureClass.TRANSIENT, new Ladder(Duration.ofMinutes(10), 2, Duration.ofHours(1), Jitter.NONE))
                .cutoff(FailureClass.TRANSIENT, Duration.ofHours(1))
                .decisions();
        Instant at = NOW.plus(Duration.ofMinutes(49));

        Disposition d = fail(decisions, run(decisions, fresh(), at), FailureClass.TRANSIENT, at);

        assertEquals(Duration.ofMinutes(10), assertInstanceOf(Disposition.RetryAfter.class, d).delay());
    }

    @Test
    void historyKeepsOnlyTheNewestEntries() {
        Decisions decisions = policy().limit(FailureClass.TRANSIENT, 10).historySize(3).decisions();
        LedgerRecord record = fresh();
        Instant now = NOW;
        for (int i = 0; i < 4; i++) {
            Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class,
                    fail(decisions, run(decisions, record, now), FailureClass.TRANSIENT, now));
            record = retry.next();
            now = now.plus(retry.delay());
        }

        LedgerRecord fifth = run(decisions, record, now);

        assertEquals(5, fifth.attempt());
        assertEquals(List.of(3, 4, 5), fifth.history().stream().map(AttemptEntry::number).toList());
        assertEquals(List.of(AttemptOutcome.FAILED, AttemptOutcome.FAILED, AttemptOutcome.RUNNING),
                fifth.history().stream().map(AttemptEntry::outcome).toList());
    }

    @Test
    void aFailedAttemptRecordsItsClassErrorAndChosenDelay() {
        Decisions decisions = policy().decisions();
        LedgerRecord running = run(decisions, fresh(), NOW);

        Disposition.RetryAfter retry = assertInstanceOf(Disposition.RetryAfter.class,
                fail(decisions, running, FailureClass.THROTTLED, NOW.plusSeconds(3)));

        AttemptEntry entry = retry.next().currentEntry();
        assertEquals(AttemptOutcome.FAILED, entry.outcome());
        assertEquals(FailureClass.THROTTLED, entry.failureClass());
        assertEquals("BoomException", entry.errorType());
        assertEquals("boom THROTTLED", entry.message());
        assertEquals(NOW.plusSeconds(3), entry.endedAt());
        assertEquals(retry.delay(), entry.retryDelay());
        assertNull(retry.next().leaseOwner());
    }
}

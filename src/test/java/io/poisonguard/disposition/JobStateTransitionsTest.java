package io.poisonguard.disposition;

import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.util.EnumSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobStateTransitionsTest {
    private static final Instant NOW = Instant.parse("2026-03-01T10:00:00Z");

    private static LedgerRecord in(JobState state) {
        return LedgerRecord.fresh("job-1", "acme", "permit-report", 1, NOW).moveTo(state, NOW);
    }

    @ParameterizedTest
    @EnumSource(value = JobState.class, names = {"SUCCEEDED", "RESOLVED"})
    void finishedStatesHaveNoNextState(JobState terminal) {
        assertTrue(terminal.next().isEmpty());
    }

    /** A job whose payload was concluded gone is quarantined again when a copy of it turns up, and only then. */
    @Test
    void anUnrecoverableJobCanOnlyBeQuarantinedAgain() {
        assertEquals(EnumSet.of(JobState.QUARANTINED), JobState.UNRECOVERABLE.next());
    }

    @Test
    void anActiveJobCanRetrySucceedOrBeQuarantined() {
        assertEquals(EnumSet.of(JobState.ACTIVE, JobState.RETRY_WAIT, JobState.SUCCEEDED, JobState.QUARANTINED), JobState.ACTIVE.next());
    }

    @Test
    void aQuarantinedJobOnlyLeavesThroughAnOperatorOrAsADisposableDrop() {
        // DROPPED is the service's own move, for a disposable job type only (Quarantiner); every other exit is an operator's.
        assertEquals(EnumSet.of(JobState.REPLAYING, JobState.RESOLVED, JobState.UNRECOVERABLE, JobState.DROPPED), JobState.QUARANTINED.next());
        assertEquals(EnumSet.noneOf(JobState.class), JobState.DROPPED.next(), "a dropped job never runs again");
        assertTrue(JobState.DROPPED.parked());
    }

    @Test
    void aReplayingJobRunsOrIsRefusedButNeverSucceedsWithoutRunning() {
        assertEquals(EnumSet.of(JobState.ACTIVE, JobState.QUARANTINED, JobState.UNRECOVERABLE, JobState.REPLAYING), JobState.REPLAYING.next());
    }

    @Test
    void aReplayStartsANewGenerationWithAFreshFailureBudgetAndKeepsTheAttemptCount() {
        LedgerRecord quarantined = in(JobState.QUARANTINED).withAttempt(3)
                .withFailureCounted(io.poisonguard.failure.FailureClass.PERMANENT)
                .withQuarantine(io.poisonguard.failure.FailureClass.PERMANENT, "limit");
        LedgerRecord replayed = quarantined.replayed(NOW.plusSeconds(5));
        assertEquals(JobState.REPLAYING, replayed.state());
        assertEquals(2, replayed.generation());
        assertEquals(3, replayed.attempt());
        assertEquals(0, replayed.failuresOf(io.poisonguard.failure.FailureClass.PERMANENT));
        assertEquals(null, replayed.quarantineClass());
        assertEquals(quarantined.jobId(), replayed.jobId());
    }

    @Test
    void aWaitingJobCanRunAgainOrBeQuarantinedButNotSucceedWithoutRunning() {
        assertEquals(EnumSet.of(JobState.ACTIVE, JobState.RETRY_WAIT, JobState.QUARANTINED), JobState.RETRY_WAIT.next());
    }

    static Stream<Arguments> everyMove() {
        return Stream.of(JobState.values()).flatMap(from -> Stream.of(JobState.values()).map(to -> Arguments.of(from, to)));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("everyMove")
    void moveToFollowsTheTransitionTable(JobState from, JobState to) {
        LedgerRecord record = in(from);

        if (from.canMoveTo(to)) {
            LedgerRecord moved = record.moveTo(to, NOW.plusSeconds(1));
            assertEquals(to, moved.state());
            assertEquals(NOW.plusSeconds(1), moved.updatedAt());
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> record.moveTo(to, NOW.plusSeconds(1)));
            assertTrue(e.getMessage().contains("job-1") && e.getMessage().contains(from + " -> " + to), e.getMessage());
        }
    }

    @Test
    void aQuarantinedJobCannotBecomeActiveAgain() {
        assertThrows(IllegalStateException.class, () -> in(JobState.QUARANTINED).moveTo(JobState.ACTIVE, NOW));
    }

    @Test
    void aSucceededJobCannotBeRetriedOrQuarantined() {
        assertThrows(IllegalStateException.class, () -> in(JobState.SUCCEEDED).moveTo(JobState.RETRY_WAIT, NOW));
        assertThrows(IllegalStateException.class, () -> in(JobState.SUCCEEDED).moveTo(JobState.QUARANTINED, NOW));
    }
}

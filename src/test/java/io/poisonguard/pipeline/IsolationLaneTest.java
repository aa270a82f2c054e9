package io.poisonguard.pipeline;

import io.poisonguard.config.Configs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The isolation lane with real threads: each job enters on its own thread and holds its slot until
 * the test lets it finish, as a job's handler would (the lane's locks belong to the thread that took them).
 */
class IsolationLaneTest {
    /** How long a suspect waits in the tests where it must give up: long enough to watch it wait. */
    static final Duration SHORT_WAIT = Duration.ofSeconds(1);
    /** A wait no test should come near: the job gets in as soon as the lane lets it. */
    static final Duration LONG_WAIT = Duration.ofSeconds(30);

    final ExecutorService threads = Executors.newCachedThreadPool();
    final List<Job> jobs = new ArrayList<>();
    final IsolationLane lane = lane(8);

    static IsolationLane lane(int concurrency) {
        return new IsolationLane(Configs.defaults().set("poison-guard.consumer.concurrency", String.valueOf(concurrency)).build());
    }

    /** A job on its own thread: enters the lane, and if it got a slot holds it until {@link #finish()}. */
    final class Job {
        private final CompletableFuture<Optional<IsolationLane.Slot>> entered = new CompletableFuture<>();
        private final CountDownLatch finish = new CountDownLatch(1);
        private final CompletableFuture<Void> left = new CompletableFuture<>();

        Job(IsolationLane lane, boolean suspect, Duration maxWait) {
            this(() -> lane.enter(suspect, maxWait));
        }

        Job(java.util.function.Supplier<Optional<IsolationLane.Slot>> enter) {
            jobs.add(this);
            threads.execute(() -> {
                Optional<IsolationLane.Slot> slot = enter.get();
                entered.complete(slot);
                try {
                    if (slot.isPresent()) {
                        finish.await();
                        slot.get().close();
                    }
                    left.complete(null);
                } catch (Throwable t) {
                    left.completeExceptionally(t);
                }
            });
        }

        /** The slot it got, or empty if it gave up: waits for the job to get in or give up. */
        Optional<IsolationLane.Slot> slot() {
            return entered.orTimeout(LONG_WAIT.toSeconds() + 10, TimeUnit.SECONDS).join();
        }

        boolean hasEnteredOrGivenUp() {
            return entered.isDone();
        }

        /** Lets the job finish and waits until it has left the lane. */
        void finish() {
            finish.countDown();
            left.orTimeout(10, TimeUnit.SECONDS).join();
        }
    }

    Job ordinary(Duration maxWait) {
        return new Job(lane, false, maxWait);
    }

    Job suspect(Duration maxWait) {
        return new Job(lane, true, maxWait);
    }

    /** Whether a job that will not wait at all gets a slot now; it leaves at once if it does. */
    boolean getsInAtOnce(boolean suspect) {
        Job job = new Job(lane, suspect, Duration.ZERO);
        boolean got = job.slot().isPresent();
        job.finish();
        return got;
    }

    @AfterEach
    void letEveryJobGo() {
        jobs.forEach(j -> j.finish.countDown());
        threads.shutdown();
    }

    /**
     * A suspect waiting longer than its copy stays hidden keeps its place in the lock's queue while its copy is kept hidden
     * (here every 20 ms). It used to wait in chunks of that length, leaving the queue at each one's end: an ordinary copy
     * queued behind it then took the lane beside the job in flight, and the suspect had that one to wait for too.
     */
    @Test
    void aSuspectWaitingLongKeepsItsPlaceAheadOfAnOrdinaryCopyQueuedBehindIt() {
        Job inFlight = ordinary(LONG_WAIT);
        assertTrue(inFlight.slot().isPresent());
        java.util.concurrent.atomic.AtomicInteger keptHidden = new java.util.concurrent.atomic.AtomicInteger();
        Job suspect = new Job(() -> lane.enterAlone(Duration.ofMillis(20), LONG_WAIT, Duration.ofMillis(20), () -> {
            keptHidden.incrementAndGet();
            return true;
        }));
        // Queued: a new ordinary job no longer gets in at once.
        await().pollInterval(Duration.ofMillis(1)).atMost(SHORT_WAIT).until(() -> !getsInAtOnce(false));
        Job behind = ordinary(LONG_WAIT);

        await().atMost(SHORT_WAIT).until(() -> keptHidden.get() >= 10);
        assertFalse(behind.hasEnteredOrGivenUp(), "the ordinary copy went ahead of the waiting suspect");
        assertFalse(suspect.hasEnteredOrGivenUp());

        inFlight.finish();
        IsolationLane.Slot slot = suspect.slot().orElseThrow(() -> new AssertionError("the suspect gets the lane once it is empty"));
        assertTrue(slot.alone());
        assertFalse(behind.hasEnteredOrGivenUp(), "nothing beside the suspect");
        suspect.finish();
        assertTrue(behind.slot().isPresent());
    }

    /** A suspect whose copy can no longer be kept hidden stops waiting (its copy goes back), and nothing is left interrupted. */
    @Test
    void aSuspectWhoseCopyCannotBeKeptHiddenStopsWaiting() {
        Job inFlight = ordinary(LONG_WAIT);
        assertTrue(inFlight.slot().isPresent());
        CompletableFuture<Boolean> interruptedAfter = new CompletableFuture<>();
        Job suspect = new Job(() -> {
            Optional<IsolationLane.Slot> slot = lane.enterAlone(Duration.ofMillis(20), LONG_WAIT, Duration.ofMillis(20), () -> false);
            interruptedAfter.complete(Thread.currentThread().isInterrupted());
            return slot;
        });
        assertEquals(Optional.empty(), suspect.slot());
        assertFalse(interruptedAfter.join(), "the call-off's interrupt is not left on the job's thread");
        assertFalse(lane.isolating());
    }

    /** A hiding that throws (not known to be hidden) ends the wait like one that fails: the keeper does not just stop. */
    @Test
    void aSuspectWhoseCopysHidingThrowsStopsWaiting() {
        Job inFlight = ordinary(LONG_WAIT);
        assertTrue(inFlight.slot().isPresent());
        Job suspect = new Job(() -> lane.enterAlone(Duration.ofMillis(20), LONG_WAIT, Duration.ofMillis(20), () -> {
            throw new IllegalStateException("the queue did not answer");
        }));
        await().atMost(Duration.ofSeconds(5)).until(suspect::hasEnteredOrGivenUp);
        assertEquals(Optional.empty(), suspect.slot());
        assertFalse(lane.isolating());
    }

    @Test
    void aSuspectThatCannotGetTheLaneInTimeGetsNoSlotAndNoLongerCountsAsIsolating() {
        Job inFlight = ordinary(LONG_WAIT);
        assertTrue(inFlight.slot().isPresent());

        Job suspect = suspect(SHORT_WAIT);
        await().pollInterval(Duration.ofMillis(5)).atMost(SHORT_WAIT).until(lane::isolating);

        assertEquals(Optional.empty(), suspect.slot(), "the ordinary job held the lane for the whole wait");
        assertFalse(lane.isolating(), "a suspect that gave up no longer stops the poller");
    }

    @Test
    void ordinaryJobsGetInAgainOnceAWaitingSuspectHasGivenUp() {
        Job inFlight = ordinary(LONG_WAIT);
        assertTrue(inFlight.slot().isPresent());
        Job suspect = suspect(SHORT_WAIT);
        // The fair lock queues new ordinary jobs behind the waiting suspect.
        await().pollInterval(Duration.ofMillis(5)).atMost(SHORT_WAIT).until(() -> !getsInAtOnce(false));
        assertEquals(Optional.empty(), suspect.slot());

        Job next = ordinary(Duration.ZERO);

        IsolationLane.Slot slot = next.slot().orElseThrow(() -> new AssertionError("the lane is still blocked behind the departed suspect"));
        assertEquals(1, slot.othersInFlight());
        assertFalse(slot.alone());
    }

    @Test
    void aSuspectWaitsForTheJobsInFlightToFinishThenRunsAlone() {
        Job first = ordinary(LONG_WAIT);
        Job second = ordinary(LONG_WAIT);
        assertTrue(first.slot().isPresent());
        assertTrue(second.slot().isPresent());
        Job suspect = suspect(LONG_WAIT);
        await().until(lane::isolating);

        first.finish();
        assertFalse(suspect.hasEnteredOrGivenUp(), "the second job is still in flight");
        second.finish();

        IsolationLane.Slot slot = suspect.slot().orElseThrow(() -> new AssertionError("the suspect gets the lane once it is empty"));
        assertTrue(slot.alone());
        assertEquals(0, slot.othersInFlight());
    }

    @Test
    void aSuspectInTheLaneKeepsOrdinaryJobsOutUntilItCloses() {
        Job suspect = suspect(LONG_WAIT);
        IsolationLane.Slot slot = suspect.slot().orElseThrow();
        assertTrue(slot.alone());
        assertTrue(lane.isolating());

        assertFalse(getsInAtOnce(false), "no ordinary job starts beside a suspect");
        assertFalse(getsInAtOnce(true), "nor a second suspect");
        Job waiting = ordinary(LONG_WAIT);
        assertFalse(waiting.hasEnteredOrGivenUp(), "the suspect still holds the lane");

        suspect.finish();

        assertTrue(waiting.slot().isPresent(), "the waiting ordinary job gets in once the suspect has closed");
        assertFalse(lane.isolating());
    }

    @Test
    void othersInFlightCountsTheOrdinaryJobsAlreadyInTheLane() {
        Job first = ordinary(LONG_WAIT);
        assertEquals(0, first.slot().orElseThrow().othersInFlight());
        Job second = ordinary(LONG_WAIT);
        assertEquals(1, second.slot().orElseThrow().othersInFlight());
        Job third = ordinary(LONG_WAIT);
        assertEquals(2, third.slot().orElseThrow().othersInFlight());

        first.finish();
        Job fourth = ordinary(LONG_WAIT);

        assertEquals(2, fourth.slot().orElseThrow().othersInFlight());
        assertFalse(fourth.slot().orElseThrow().alone());
        assertFalse(lane.isolating(), "ordinary jobs never make the lane isolating");
    }

    @Test
    void inAWorkerWithRoomForOneJobEveryJobRunsAlone() {
        Job only = new Job(lane(1), false, LONG_WAIT);

        IsolationLane.Slot slot = only.slot().orElseThrow();

        assertTrue(slot.alone(), "a crash here can only be this job's");
        assertEquals(0, slot.othersInFlight());
    }

    /**
     * Room for one job still holds more than one copy: the reserve's prefetched copies have their attempts written at
     * intake and wait in the lane for their turn. A copy taken in beside another is not alone, so a crash while the
     * first one's handler runs is not pinned on it as its own (CRASH) but counted ambiguous.
     */
    @Test
    void inAWorkerWithRoomForOneJobACopyTakenInBesideAnotherIsNotAlone() {
        IsolationLane lane = lane(1);
        Job first = new Job(lane, false, LONG_WAIT);
        IsolationLane.Slot running = first.slot().orElseThrow();
        // The second copy comes in only once the first is in: on their own threads either could enter first.
        Job prefetched = new Job(lane, false, LONG_WAIT);
        IsolationLane.Slot waiting = prefetched.slot().orElseThrow();

        assertTrue(running.alone(), "nothing else was in the lane when it came in");
        assertFalse(waiting.alone(), "another job was in the lane when it came in");
        assertEquals(1, waiting.othersInFlight());
    }

    /**
     * A worker where a handler that ignored its interrupt still runs is about to be replaced: a job that
     * comes in then is not recorded as running alone, suspect or not, since the replacement's kill would be charged to
     * it as its own crash while the stuck handler is the cause.
     */
    @Test
    void inAWorkerWhereAStuckHandlerMayStillRunNoJobRunsAlone() {
        WorkerHealth health = new WorkerHealth(new io.poisonguard.observability.Metrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
        IsolationLane solo = new IsolationLane(Configs.defaults().set("poison-guard.consumer.concurrency", "1").build(), health);
        IsolationLane wide = new IsolationLane(Configs.defaults().build(), health);
        health.stuck("stuck-1", 1);

        Job first = new Job(solo, false, LONG_WAIT);
        Job suspect = new Job(wide, true, LONG_WAIT);

        assertFalse(first.slot().orElseThrow().alone(), "a one-job worker's job in an empty lane");
        assertFalse(suspect.slot().orElseThrow().alone(), "a suspect that took the lane whole");
    }
}

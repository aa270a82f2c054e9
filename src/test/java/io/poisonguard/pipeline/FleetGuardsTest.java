package io.poisonguard.pipeline;

import io.poisonguard.systemic.GuardBoard;
import io.poisonguard.systemic.SystemicWatch;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The fleet view of the systemic guards: a worker is listed while its trip is posted after the newest resume and it has said
 * so lately; one silent for minutes stopped (or lost its post) and is not; one silent for a day is taken off the board.
 * Posts keep their order, and a worker that stays tripped posts again now and then.
 */
class FleetGuardsTest {
    private static final Instant T = Instant.parse("2026-12-06T03:00:00Z");

    /** A board in memory, recording what was posted, in order. */
    static final class Board implements GuardBoard {
        final Map<String, Posted> workers = new ConcurrentHashMap<>();
        volatile Instant resumedAt;
        final List<String> posts = new CopyOnWriteArrayList<>();

        @Override
        public void tripped(String worker, Instant since, String cause, Instant now) {
            posts.add("trip " + worker + " at " + now);
            workers.put(worker, new Posted(since, cause, now));
        }

        @Override
        public void cleared(String worker) {
            posts.add("clear " + worker);
            workers.remove(worker);
        }

        @Override
        public void resumed(Instant at) {
            resumedAt = at;
        }

        @Override
        public GuardBoard.Board read() {
            return new GuardBoard.Board(Map.copyOf(workers), Optional.ofNullable(resumedAt));
        }

        @Override
        public void forget(Collection<String> gone) {
            posts.add("forget " + gone);
            gone.forEach(workers::remove);
        }
    }

    @Test
    void aWorkerIsListedWhileItsTripIsAfterTheNewestResumeAndItHasSaidSoLately() {
        Board board = new Board();
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        clock.now = T;
        clock.now = T.plus(Duration.ofDays(2));
        Instant now = clock.now;
        board.workers.put("listed", new GuardBoard.Posted(now.minusSeconds(300), "5 jobs failed alike", now.minusSeconds(30)));
        board.workers.put("silent", new GuardBoard.Posted(now.minusSeconds(300), "stopped while tripped", now.minus(Duration.ofMinutes(10))));
        board.workers.put("gone", new GuardBoard.Posted(now.minus(Duration.ofDays(2)), "long gone", now.minus(Duration.ofDays(2))));
        // Tripped before the resume and still posting minutes after it: it never heard of it (it cannot read the audit trail).
        board.workers.put("deaf", new GuardBoard.Posted(now.minusSeconds(900), "cannot read the audit trail", now.minusSeconds(20)));
        board.workers.put("before-resume", new GuardBoard.Posted(now.minusSeconds(900), "old", now.minusSeconds(590)));
        board.resumedAt = now.minusSeconds(600);

        List<FleetGuards.Tripped> tripped = new FleetGuards(board, "w0", clock, Duration.ofSeconds(5)).tripped();

        assertEquals(List.of("deaf", "listed"), tripped.stream().map(FleetGuards.Tripped::worker).sorted().toList());
        await().atMost(Duration.ofSeconds(5)).until(() -> board.posts.contains("forget [gone]"));
    }

    @Test
    void postsKeepTheirOrderAndAStillTrippedWorkerPostsAgainEveryMinute() {
        Board board = new Board();
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        clock.now = T;
        FleetGuards fleet = new FleetGuards(board, "w0", clock, Duration.ofSeconds(5));
        SystemicWatch.Trip trip = new SystemicWatch.Trip(null, "20 quarantines within 1m", List.of("job-1"), T);

        fleet.tripped(trip);
        clock.now = T.plusSeconds(30);
        fleet.stillTripped(trip);
        clock.now = T.plusSeconds(61);
        fleet.stillTripped(trip);
        fleet.cleared();

        await().atMost(Duration.ofSeconds(5)).until(() -> board.posts.size() == 3);
        assertEquals(List.of("trip w0 at " + T, "trip w0 at " + T.plusSeconds(61), "clear w0"), board.posts);
    }

    /** A fleet check that read the trip just before a probe cleared it does not post it again after the clear. */
    @Test
    void aCheckThatReadTheTripBeforeItClearedDoesNotPostItAgain() {
        Board board = new Board();
        HeartbeatRenewalTest.Hands clock = new HeartbeatRenewalTest.Hands();
        clock.now = T;
        FleetGuards fleet = new FleetGuards(board, "w0", clock, Duration.ofSeconds(5));
        SystemicWatch.Trip trip = new SystemicWatch.Trip(null, "5 jobs failed alike", List.of("job-1"), T);

        fleet.tripped(trip);
        fleet.cleared();
        clock.now = T.plusSeconds(120);
        fleet.stillTripped(trip);
        // Posts go out in order: once this one is on the board, every post before it is too.
        fleet.resumed(T.plusSeconds(121));

        await().atMost(Duration.ofSeconds(5)).until(() -> board.resumedAt != null);
        assertEquals(List.of("trip w0 at " + T, "clear w0"), board.posts);
        assertEquals(Map.of(), board.workers);
    }
}

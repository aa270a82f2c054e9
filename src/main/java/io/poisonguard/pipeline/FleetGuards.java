package io.poisonguard.pipeline;

import io.poisonguard.systemic.GuardBoard;
import io.poisonguard.systemic.SystemicWatch;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Named;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * The systemic guards of the whole fleet: each worker posts its own on the {@link GuardBoard} when it trips, again every
 * {@link #REPOST} while it stays tripped, and takes it down when it clears, so that whichever worker answers {@code GET
 * /ops/consumption} can say which workers have stopped. A trip not posted again for {@link #SILENT} is a worker that stopped
 * (or lost its post): it is not listed, and forgotten after {@link #FORGET}. An operator's resume clears every trip before it.
 *
 * <p>Posts go out one at a time, in order, in the background: a trip is decided on a worker's hot path, which waits for no
 * table, and a clear must not overtake the trip it clears.
 */
@Singleton
public class FleetGuards {
    private static final Logger LOG = Logger.getLogger(FleetGuards.class);
    static final Duration REPOST = Duration.ofMinutes(1);
    static final Duration SILENT = REPOST.multipliedBy(3);
    static final Duration FORGET = Duration.ofDays(1);

    private final GuardBoard board;
    private final String workerId;
    private final Clock clock;
    private final ExecutorService posts = Executors.newSingleThreadExecutor(Thread.ofVirtual().name("guard-post").factory());
    private volatile SystemicWatch.Trip posted;
    private volatile Instant postedAt = Instant.MIN;

    public FleetGuards(GuardBoard board, @Named("worker-id") String workerId, Clock clock) {
        this.board = board;
        this.workerId = workerId;
        this.clock = clock;
    }

    /** A worker whose guard is tripped, as it last posted: since when, why, and when it last said so. */
    public record Tripped(String worker, Instant since, String cause, Instant heardAt) {
    }

    void tripped(SystemicWatch.Trip trip) {
        posted = trip;
        post(trip);
    }

    /** While this worker's guard stays tripped, posts it again every {@link #REPOST} (called by the fleet check). */
    void stillTripped(SystemicWatch.Trip trip) {
        if (trip != posted || !postedAt.plus(REPOST).isAfter(clock.instant())) {
            posted = trip;
            post(trip);
        }
    }

    private void post(SystemicWatch.Trip trip) {
        postedAt = clock.instant();
        String cause = trip.signature() == null ? trip.cause() : trip.cause() + " (" + trip.signature().describe() + ")";
        submit("trip", () -> board.tripped(workerId, trip.at(), cause, clock.instant()));
    }

    void cleared() {
        posted = null;
        submit("clear", () -> board.cleared(workerId));
    }

    /** An operator's resume, for the workers that never hear of it (a worker of an older release, one stopped while tripped). */
    public void resumed(Instant at) {
        submit("resume", () -> board.resumed(at));
    }

    private void submit(String what, Runnable post) {
        try {
            posts.execute(() -> {
                try {
                    post.run();
                } catch (RuntimeException e) {
                    LOG.warnf("This worker's guard %s was not posted for the fleet view (%s)", what, e.getClass().getSimpleName());
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debugf("Guard %s not posted: shutting down", what);
        }
    }

    /**
     * The workers whose guard is tripped: posted after the newest resume and heard from within {@link #SILENT}. Those silent
     * for {@link #FORGET} are taken off the board.
     *
     * @throws io.poisonguard.ledger.StoreUnavailable when the board does not answer
     */
    public List<Tripped> tripped() {
        GuardBoard.Board read = board.read();
        Instant now = clock.instant();
        List<String> gone = read.workers().entrySet().stream().filter(e -> heardBefore(e.getValue(), now.minus(FORGET)))
                .map(Map.Entry::getKey).toList();
        if (!gone.isEmpty()) {
            submit("forget", () -> board.forget(gone));
        }
        return read.workers().entrySet().stream()
                .filter(e -> read.resumedAt().map(r -> e.getValue().since() != null && e.getValue().since().isAfter(r)).orElse(true))
                .filter(e -> !heardBefore(e.getValue(), now.minus(SILENT)))
                .map(e -> new Tripped(e.getKey(), e.getValue().since(), e.getValue().cause(), e.getValue().heardAt()))
                .sorted(Comparator.comparing(Tripped::since, Comparator.nullsFirst(Comparator.naturalOrder()))).toList();
    }

    private static boolean heardBefore(GuardBoard.Posted p, Instant t) {
        return p.heardAt() == null || p.heardAt().isBefore(t);
    }

    @PreDestroy
    void close() {
        posts.shutdown();
    }
}

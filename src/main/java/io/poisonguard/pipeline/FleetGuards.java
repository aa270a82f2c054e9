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
 * {@link #REPOST} (or fleet check, if longer) while it stays tripped, and takes it down when it clears or stops, so that
 * whichever worker answers {@code GET /ops/consumption} can say which workers have stopped. A trip not posted again for three
 * of those is a worker that stopped (or lost its post): it is not listed, and forgotten after {@link #FORGET}. An operator's
 * audited resume clears every trip before it, except of a worker still posting after it would have heard of it.
 *
 * <p>Posts go out one at a time, in order, in the background: a trip is decided on a worker's hot path, which waits for no
 * table, and a clear must not overtake the trip it clears.
 */
@Singleton
public class FleetGuards {
    private static final Logger LOG = Logger.getLogger(FleetGuards.class);
    static final Duration REPOST = Duration.ofMinutes(1);
    static final Duration FORGET = Duration.ofDays(1);

    private final GuardBoard board;
    private final String workerId;
    private final Clock clock;
    private final ExecutorService posts = Executors.newSingleThreadExecutor(Thread.ofVirtual().name("guard-post").factory());
    /** A trip not posted again for this long is a worker that stopped (reposts ride on the fleet check). */
    private final Duration silent;
    /** A worker tripped before a resume that still posts this long after it did not hear of it: it is still stopped. */
    private final Duration heardResumeWithin;
    private SystemicWatch.Trip posted;
    private Instant postedAt = Instant.MIN;

    @jakarta.inject.Inject
    public FleetGuards(GuardBoard board, @Named("worker-id") String workerId, Clock clock, io.poisonguard.config.PoisonGuardConfig config) {
        this(board, workerId, clock, config.systemic().fleetCheckInterval());
    }

    FleetGuards(GuardBoard board, String workerId, Clock clock, Duration fleetCheck) {
        this.board = board;
        this.workerId = workerId;
        this.clock = clock;
        Duration beat = fleetCheck.compareTo(REPOST) > 0 ? fleetCheck : REPOST;
        this.silent = beat.multipliedBy(3);
        this.heardResumeWithin = fleetCheck.multipliedBy(2).compareTo(Duration.ofSeconds(30)) > 0 ? fleetCheck.multipliedBy(2)
                : Duration.ofSeconds(30);
    }

    /** A worker whose guard is tripped, as it last posted: since when, why, and when it last said so. */
    public record Tripped(String worker, Instant since, String cause, Instant heardAt) {
    }

    synchronized void tripped(SystemicWatch.Trip trip) {
        posted = trip;
        post(trip);
    }

    /**
     * While this worker's guard stays tripped, posts it again every {@link #REPOST} (called by the fleet check). Only the trip
     * posted last: a check that read the trip just before a probe cleared it must not post it again after the clear.
     */
    synchronized void stillTripped(SystemicWatch.Trip trip) {
        if (trip == posted && !postedAt.plus(REPOST).isAfter(clock.instant())) {
            post(trip);
        }
    }

    private void post(SystemicWatch.Trip trip) {
        Instant now = clock.instant();
        postedAt = now;
        String cause = trip.signature() == null ? trip.cause() : trip.cause() + " (" + trip.signature().describe() + ")";
        submit("trip", () -> board.tripped(workerId, trip.at(), cause, now));
    }

    synchronized void cleared() {
        posted = null;
        submit("clear", () -> board.cleared(workerId));
    }

    /** The worker stops: a trip it posted comes down (it consumes nothing either way, and is gone). */
    synchronized void stopping() {
        if (posted != null) {
            cleared();
        }
    }

    /** An operator's resume, audited: the workers that never hear of it (one of an older release) stop being listed. */
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
                .filter(e -> read.resumedAt().map(r -> !resumed(e.getValue(), r)).orElse(true))
                .filter(e -> !heardBefore(e.getValue(), now.minus(silent)))
                .map(e -> new Tripped(e.getKey(), e.getValue().since(), e.getValue().cause(), e.getValue().heardAt()))
                .sorted(Comparator.comparing(Tripped::since, Comparator.nullsFirst(Comparator.naturalOrder()))).toList();
    }

    /**
     * Whether a resume cleared the posted trip: it tripped before the resume (as {@code SystemicWatch.resumedElsewhere} judges,
     * a trip in the resume's own instant stays) and has not posted since it would have heard of it. One that keeps posting did
     * not hear (it cannot read the audit trail): it is still stopped.
     */
    private boolean resumed(GuardBoard.Posted p, Instant resumedAt) {
        return p.since() != null && p.since().isBefore(resumedAt) && heardBefore(p, resumedAt.plus(heardResumeWithin).plusMillis(1));
    }

    private static boolean heardBefore(GuardBoard.Posted p, Instant t) {
        return p.heardAt() == null || p.heardAt().isBefore(t);
    }

    @PreDestroy
    void close() {
        posts.shutdown();
    }
}

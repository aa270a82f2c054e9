package io.poisonguard.replay;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.ledger.StoreUnavailable;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Reads, from the ledger, how the jobs a bulk replay just sent came out: each replayed generation ends SUCCEEDED, parked
 * again (the fix did not hold for it), or is not known by the deadline. The canary is a wave of one.
 *
 * <p>Every pending job is read once a round, the reads spaced to {@value #READS_PER_SECOND} a second at most, however many
 * are pending; the deadline and the stop are looked at after every read.
 */
final class WaveWatch {
    private static final Logger LOG = Logger.getLogger(WaveWatch.class);
    private static final Duration POLL = Duration.ofMillis(250);
    private static final int READS_PER_SECOND = 32;

    private final LedgerStore ledger;
    private final Clock clock;

    WaveWatch(LedgerStore ledger, Clock clock) {
        this.ledger = ledger;
        this.clock = clock;
    }

    /** A job sent by the batch, as the generation it was sent as. */
    record Sent(JobKey key, int generation) {
    }

    /** How one sent job came out. */
    sealed interface Ending {
        record Succeeded() implements Ending {
        }

        /** Parked again at the sent generation: the fix did not hold for it. */
        record FailedAgain(JobState state, String reason) implements Ending {
        }

        /** Replayed again since (another action moved it to a newer generation): this batch's send says nothing more. */
        record MovedOn(int generation) implements Ending {
        }

        /** Not ended by the deadline; {@code started} says whether a worker had taken it (else it waits behind the backlog). */
        record Unknown(boolean started) implements Ending {
        }
    }

    /** The wave's endings, in the order sent, and what stopped the watch early, if anything did. */
    record Result(Map<JobKey, Ending> endings, Optional<String> stoppedBy) {
        List<Map.Entry<JobKey, Ending>> failedAgain() {
            return endings.entrySet().stream().filter(e -> e.getValue() instanceof Ending.FailedAgain).toList();
        }

        long count(Class<? extends Ending> kind) {
            return endings.values().stream().filter(kind::isInstance).count();
        }
    }

    /**
     * Watches the wave until every job has ended, {@code timeout} has passed, or {@code stop} names a reason to stop
     * (this worker's systemic guard tripped). A ledger read that fails says nothing about a job: it is read again next round.
     */
    Result await(List<Sent> wave, Duration timeout, Supplier<Optional<String>> stop) {
        Map<JobKey, Ending> endings = new LinkedHashMap<>();
        Map<JobKey, JobState> seen = new java.util.HashMap<>();
        Instant deadline = clock.instant().plus(timeout);
        Optional<String> stopped = Optional.empty();
        boolean over = false;
        while (!over) {
            for (Sent s : wave) {
                if (endings.containsKey(s.key())) {
                    continue;
                }
                read(s, seen).ifPresent(e -> endings.put(s.key(), e));
                stopped = stop.get();
                over = endings.size() == wave.size() || stopped.isPresent() || !clock.instant().isBefore(deadline);
                if (over) {
                    break;
                }
                // Reads spaced, so a wide wave does not burst on the ledger the workers are writing.
                LockSupport.parkNanos(1_000_000_000L / READS_PER_SECOND);
            }
            over |= endings.size() == wave.size();
            if (!over) {
                LockSupport.parkNanos(POLL.toNanos());
            }
        }
        // Started: a read found the job's copy taken by a worker (no longer REPLAYING).
        wave.forEach(s -> endings.putIfAbsent(s.key(), new Ending.Unknown(seen.containsKey(s.key()) && seen.get(s.key()) != JobState.REPLAYING)));
        return new Result(order(wave, endings), stopped);
    }

    /** The job's ending, if it has one; {@code seen} keeps the last state read at the sent generation. */
    private Optional<Ending> read(Sent s, Map<JobKey, JobState> seen) {
        Optional<LedgerRecord> found;
        try {
            found = ledger.findOwn(s.key());
        } catch (StoreUnavailable down) {
            LOG.debugf("Bulk replay: reading job %s's outcome failed (%s); looking again", s.key().jobId(), down.getMessage());
            return Optional.empty();
        }
        if (found.isEmpty()) {
            return Optional.empty();
        }
        LedgerRecord r = found.get();
        if (r.generation() > s.generation()) {
            return Optional.of(new Ending.MovedOn(r.generation()));
        }
        if (r.generation() < s.generation()) {
            return Optional.empty();
        }
        seen.put(s.key(), r.state());
        if (r.state() == JobState.SUCCEEDED) {
            return Optional.of(new Ending.Succeeded());
        }
        if (r.state().parked()) {
            return Optional.of(new Ending.FailedAgain(r.state(), r.quarantineReason()));
        }
        return Optional.empty();
    }

    private static Map<JobKey, Ending> order(List<Sent> wave, Map<JobKey, Ending> endings) {
        Map<JobKey, Ending> ordered = new LinkedHashMap<>();
        wave.forEach(s -> ordered.put(s.key(), endings.get(s.key())));
        return ordered;
    }
}

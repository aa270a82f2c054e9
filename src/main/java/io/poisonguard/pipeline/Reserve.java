package io.poisonguard.pipeline;

/**
 * How many received messages the poller holds ahead of its working slots (the prefetched reserve), sized while it
 * runs when {@code consumer.prefetch} is unset.
 *
 * <p>A reserve must last while the next one comes in: a receive's round trip and its messages' intakes (the ledger
 * write each one makes before it may start). Over that refill time the working slots spend
 * {@code concurrency × refill / handler} jobs. The size is twice that, so the receive that goes out once four fifths
 * of the reserve are spent ({@link Poller#fill}) arrives before the rest is; never below the fixed default (the
 * concurrency and a quarter, at most 10) and never above {@link #CEILING} (ten full receives), nor above
 * {@link #PER_SLOT} times the concurrency.
 *
 * <p>The ceiling was two full receives (and two and a half times the concurrency) until 2026-12-05, then four (and
 * five times the concurrency) until 2026-12-07. At concurrency 8 in the bench, where a refill took 10-13 ms and a slot
 * freed about every millisecond (nineteenth table), a reserve of 20 could run out before the next receive's messages
 * had written their attempts; a ceiling of 40 won both rounds side by side (1424 and 1516 msgs/s against 1226 and
 * 1245; BENCHMARKS.md, twenty-first table). The reserve then sat at 40 for the whole run, still short of what the
 * refill asked for, and 11-12% of the handlers that returned found no settling place ({@link Poller#settlingPlaces},
 * sized with the reserve) and kept their working slot through their outcome. With up to 96 the worker won three
 * rounds of four at concurrency 8 (median 1396 msgs/s against 1158) with a fifth less CPU a message (fuller ending
 * batches, fewer slots kept), and was level at 32 (1474 against 1465; thirty-second table). What a larger reserve
 * costs: a worker holds more messages at once, so a SIGKILL charges more suspects an ambiguous crash (each then runs
 * alone once), and the ledger's connection pool is sized for them ({@link LedgerConnections}); slow jobs never grow it,
 * and a worker fed by a trickle never sees a full receive, so never times a refill.
 *
 * <p>Jobs too slow for even that (a prefetched message would wait past half the time it may wait for its slot, half the
 * visibility timeout) shrink it below the default, to none: such a worker receives only as its slots free.
 *
 * <p>The reserve grows only when jobs are short against the refill, and then a prefetched message's wait for its turn,
 * {@code reserve × handler / concurrency}, is at most two refill times: milliseconds. Slow jobs keep the
 * default, so their prefetched copies wait about one job's run, as before. Both times are smoothed averages (each new
 * observation weighs a sixteenth), and the refill is only observed on receives that returned all they asked for:
 * under a backlog, where a reserve matters; a long poll that waited on an empty queue says nothing about it.
 */
final class Reserve {
    /** The largest reserve: ten full receives. */
    static final int CEILING = 100;
    /** The largest reserve for each working slot: a low concurrency holds at most this many messages a slot in reserve. */
    static final int PER_SLOT = 12;
    private static final double WEIGHT = 1.0 / 16;

    private final int concurrency;
    private final int floor;
    private final int ceiling;
    /** How long a prefetched message may wait for its slot before it is given back unstarted (half its visibility). */
    private final double startWithinNanos;
    private double handlerNanos = Double.NaN;
    private double refillNanos = Double.NaN;

    private Reserve(int concurrency, int floor, int ceiling, double startWithinNanos) {
        this.concurrency = concurrency;
        this.floor = floor;
        this.ceiling = ceiling;
        this.startWithinNanos = startWithinNanos;
    }

    /** A reserve of {@code size} whatever the jobs do: {@code consumer.prefetch} was set. */
    static Reserve fixed(int concurrency, int size) {
        return new Reserve(concurrency, size, size, Double.POSITIVE_INFINITY);
    }

    /** A reserve sized by the jobs' and the refill's times, between the default and the ceiling, with no bound on a wait. */
    static Reserve sized(int concurrency) {
        return sized(concurrency, java.time.Duration.ofNanos(Long.MAX_VALUE));
    }

    /**
     * A reserve sized by the jobs' and the refill's times, between the default and the ceiling; below the default when jobs
     * are so slow that a prefetched message could not start within {@code startWithin} (after which it is given back
     * unstarted, having cost a receive and two ledger writes for nothing, and one more receive toward SQS's redrive count).
     */
    static Reserve sized(int concurrency, java.time.Duration startWithin) {
        int floor = Math.min(10, concurrency + concurrency / 4);
        return new Reserve(concurrency, floor, Math.max(floor, Math.min(CEILING, concurrency * PER_SLOT)), startWithin.toNanos());
    }

    /** Whether the size follows the jobs. */
    boolean adapts() {
        return floor != ceiling;
    }

    int floor() {
        return floor;
    }

    int ceiling() {
        return ceiling;
    }

    /** A job held its working slot for {@code nanos} before its handler returned. */
    synchronized void handlerRan(long nanos) {
        handlerNanos = smooth(handlerNanos, nanos);
    }

    /** A message received under a backlog was ready to start {@code nanos} after its receive went out. */
    synchronized void refilled(long nanos) {
        refillNanos = smooth(refillNanos, nanos);
    }

    private static double smooth(double average, long sample) {
        double s = Math.max(0, sample);
        return Double.isNaN(average) ? s : average + WEIGHT * (s - average);
    }

    /** The reserve to hold now. */
    synchronized int size() {
        if (!adapts() || Double.isNaN(handlerNanos)) {
            return floor;
        }
        // The k-th message held waits about k x handler / concurrency for its slot. Those that would wait past half the
        // time they may (for the variance of job times) are not held: with jobs longer than that a worker receives only
        // as slots free, instead of taking in copies it gives back unstarted every half visibility timeout.
        double patient = Math.floor(concurrency * startWithinNanos / (2 * Math.max(handlerNanos, 1_000)));
        int lowest = (int) Math.min(floor, patient);
        if (Double.isNaN(refillNanos)) {
            return lowest;
        }
        double spentDuringRefill = concurrency * refillNanos / Math.max(handlerNanos, 1_000);
        double wanted = Math.ceil(2 * spentDuringRefill);
        return (int) Math.min(patient, Math.max(lowest, Math.min(ceiling, wanted)));
    }
}

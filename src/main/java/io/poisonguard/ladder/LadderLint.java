package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * Walks every failure class's retry chain and flags dead settings: an attempt limit that no chain can
 * reach because a cutoff or the queue retention always stops it first (seed 002's MaxAttempts=10
 * under a 16 h cutoff). Used by the ladder report command and by the boot-time check.
 */
public final class LadderLint {
    private LadderLint() {
    }

    /**
     * One report per class, in {@link FailureClass} order.
     *
     * @param retention   the queue's MessageRetentionPeriod, measured like the cutoffs from the first receive
     * @param attemptTime how long an attempt runs before it fails (0 as in seed 002; the lease for a worst case)
     * @param chains      chains walked with live jitter per class
     * @param seed        seeds each class's {@link Random}, so a report can be reproduced, and a class's
     *                    numbers do not depend on which other classes are reported
     */
    public static List<LadderReport> lint(Map<FailureClass, ClassPolicy> classes, Duration retention, Duration attemptTime,
                                          int chains, long seed) {
        List<LadderReport> reports = new ArrayList<>();
        for (FailureClass c : FailureClass.values()) {
            if (classes.containsKey(c)) {
                reports.add(report(c, classes.get(c), retention, attemptTime, chains, seed));
            }
        }
        return reports;
    }

    /** The report of one class; see {@link #lint}. */
    public static LadderReport report(FailureClass failureClass, ClassPolicy policy, Duration retention, Duration attemptTime,
                                      int chains, long seed) {
        ChainWalk walk = new ChainWalk(policy, retention, attemptTime);
        Chain fastest = walk.fastest();
        Chain slowest = walk.slowest();
        SimulatedChains simulated = SimulatedChains.of(walk, chains, new Random(seed));
        return new LadderReport(failureClass, policy, retention, attemptTime, schedule(policy, fastest), fastest, slowest,
                simulated, reach(policy.maxAttempts(), fastest, slowest));
    }

    private static List<ScheduleRow> schedule(ClassPolicy policy, Chain fastest) {
        List<ScheduleRow> rows = new ArrayList<>();
        for (int attempt = 1; attempt <= fastest.lastAttempt(); attempt++) {
            Optional<StopCondition> stop = attempt == fastest.lastAttempt() ? Optional.of(fastest.stop()) : Optional.empty();
            rows.add(new ScheduleRow(attempt, policy.ladder().floor(attempt), policy.ladder().ceiling(attempt),
                    fastest.start(attempt), stop));
        }
        return rows;
    }

    // No chain climbs faster than the floors or slower than the ceilings, so these two walks bound
    // every simulated one: the simulation adds shares, never a different verdict.
    private static Reach reach(int limit, Chain fastest, Chain slowest) {
        if (slowest.lastAttempt() >= limit) {
            return Reach.ALWAYS;
        }
        return fastest.lastAttempt() >= limit ? Reach.SOMETIMES : Reach.NEVER;
    }
}

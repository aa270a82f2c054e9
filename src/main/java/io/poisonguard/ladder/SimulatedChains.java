package io.poisonguard.ladder;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * Many chains with live jitter: how often each attempt was the last one scheduled, how often each
 * stop condition fired, and how many chains ran the attempt limit's attempt.
 */
public record SimulatedChains(int chains, SortedMap<Integer, Integer> lastScheduled, Map<StopCondition, Integer> stops,
                              int reachedLimit) {
    public SimulatedChains {
        lastScheduled = Collections.unmodifiableSortedMap(new TreeMap<>(lastScheduled));
        stops = Collections.unmodifiableMap(new EnumMap<>(stops));
    }

    /** Walks {@code chains} chains, drawing every delay from {@code random}. */
    public static SimulatedChains of(ChainWalk walk, int chains, RandomGenerator random) {
        if (chains < 1) {
            throw new IllegalArgumentException("chains must be at least 1, was " + chains);
        }
        SortedMap<Integer, Integer> lastScheduled = new TreeMap<>();
        Map<StopCondition, Integer> stops = new EnumMap<>(StopCondition.class);
        int reachedLimit = 0;
        for (int i = 0; i < chains; i++) {
            Chain chain = walk.drawn(random);
            lastScheduled.merge(chain.lastScheduled(), 1, Integer::sum);
            stops.merge(chain.stop(), 1, Integer::sum);
            if (chain.lastAttempt() >= walk.policy().maxAttempts()) {
                reachedLimit++;
            }
        }
        return new SimulatedChains(chains, lastScheduled, stops, reachedLimit);
    }

    /** {@code count} as a share of all chains, 0 to 1. */
    public double share(int count) {
        return (double) count / chains;
    }
}

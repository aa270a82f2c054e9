package io.poisonguard.disposition;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/**
 * Everything the pure decisions need: one {@link ClassPolicy} per failure class, how long an
 * attempt's lease lasts, how many history entries a ledger record keeps, and whether crashes are
 * attributed (suspects run alone; only a crash while alone is CRASH).
 */
public record Policy(Map<FailureClass, ClassPolicy> classes, Duration lease, int historySize, boolean attributeCrashes) {
    public Policy {
        for (FailureClass c : FailureClass.values()) {
            if (!classes.containsKey(c)) {
                throw new IllegalArgumentException("no policy for failure class " + c);
            }
        }
        classes = new EnumMap<>(classes);
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive");
        }
        if (historySize < 1) {
            throw new IllegalArgumentException("historySize must be at least 1");
        }
    }

    public ClassPolicy of(FailureClass c) {
        return classes.get(c);
    }

    /** The classic constructor: crash attribution on. */
    public Policy(Map<FailureClass, ClassPolicy> classes, Duration lease, int historySize) {
        this(classes, lease, historySize, true);
    }

    /** The most attempts any job can make before every class is exhausted. */
    public int attemptBound() {
        return classes.values().stream().mapToInt(ClassPolicy::maxAttempts).sum();
    }
}

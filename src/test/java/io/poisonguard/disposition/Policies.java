package io.poisonguard.disposition;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Jitter;
import io.poisonguard.ladder.Ladder;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/** Builds test policies: every class on a predictable ladder (10 s doubling, no jitter), adjusted per test. */
final class Policies {
    static final Duration LEASE = Duration.ofSeconds(60);
    static final Ladder TEN_SECONDS_DOUBLING = new Ladder(Duration.ofSeconds(10), 2, Duration.ofHours(1), Jitter.NONE);

    private final Map<FailureClass, ClassPolicy> classes = new EnumMap<>(FailureClass.class);
    private int historySize = 10;
    private boolean attributeCrashes = true;

    private Policies() {
        for (FailureClass c : FailureClass.values()) {
            classes.put(c, new ClassPolicy(5, TEN_SECONDS_DOUBLING, Optional.empty()));
        }
    }

    static Policies policy() {
        return new Policies();
    }

    Policies limit(FailureClass c, int maxAttempts) {
        ClassPolicy old = classes.get(c);
        classes.put(c, new ClassPolicy(maxAttempts, old.ladder(), old.cutoff()));
        return this;
    }

    Policies ladder(FailureClass c, Ladder ladder) {
        ClassPolicy old = classes.get(c);
        classes.put(c, new ClassPolicy(old.maxAttempts(), ladder, old.cutoff()));
        return this;
    }

    Policies cutoff(FailureClass c, Duration cutoff) {
        ClassPolicy old = classes.get(c);
        classes.put(c, new ClassPolicy(old.maxAttempts(), old.ladder(), Optional.of(cutoff)));
        return this;
    }

    Policies maxElapsed(FailureClass c, Duration budget) {
        ClassPolicy old = classes.get(c);
        classes.put(c, new ClassPolicy(old.maxAttempts(), old.ladder(), old.cutoff(), Optional.of(budget)));
        return this;
    }

    Policies historySize(int size) {
        this.historySize = size;
        return this;
    }

    Policies attributeCrashes(boolean on) {
        this.attributeCrashes = on;
        return this;
    }

    Policy build() {
        return new Policy(classes, LEASE, historySize, attributeCrashes);
    }

    Decisions decisions() {
        return new Decisions(build());
    }
}

package io.poisonguard.config;

import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Ladder;
import io.quarkus.runtime.configuration.ConfigurationException;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Each failure class's {@link ClassPolicy} as configured, refusing only values no ladder can take
 * (naming the key), never a dead attempt limit: the ladder lint reports those rather than stopping.
 */
public final class ClassPolicies {
    private ClassPolicies() {
    }

    public static Map<FailureClass, ClassPolicy> of(PoisonGuardConfig.Failures failures) {
        Map<FailureClass, ClassPolicy> classes = new EnumMap<>(FailureClass.class);
        Settings.classSettings(failures).forEach((c, s) -> classes.put(c, of(c, s)));
        return classes;
    }

    private static ClassPolicy of(FailureClass c, PoisonGuardConfig.ClassSettings s) {
        require(s.maxAttempts() >= 1 && s.maxAttempts() <= 1000, Settings.classKey(c, "max-attempts"), "must be between 1 and 1000");
        Ladder ladder;
        try {
            ladder = new Ladder(s.base(), s.multiplier(), s.cap(), s.jitter());
        } catch (IllegalArgumentException e) {
            // Ladder's messages start with the name of the value they refuse.
            String leaf = e.getMessage().startsWith("base") ? "base" : e.getMessage().startsWith("multiplier") ? "multiplier" : "cap";
            throw new ConfigurationException(Settings.classKey(c, leaf) + ": " + e.getMessage(), Set.of(Settings.classKey(c, leaf)));
        }
        Optional<Duration> cutoff = s.cutoff();
        cutoff.ifPresent(d -> require(!d.isNegative() && !d.isZero(), Settings.classKey(c, "cutoff"), "must be positive"));
        s.maxElapsed().ifPresent(d -> require(!d.isNegative() && !d.isZero(), Settings.classKey(c, "max-elapsed"), "must be positive"));
        cutoff.ifPresent(cut -> s.maxElapsed().ifPresent(d -> require(d.compareTo(cut) <= 0, Settings.classKey(c, "max-elapsed"),
                "must not exceed " + Settings.classKey(c, "cutoff") + ", which quarantines first")));
        return new ClassPolicy(s.maxAttempts(), ladder, cutoff, s.maxElapsed());
    }

    private static void require(boolean ok, String key, String why) {
        if (!ok) {
            throw new ConfigurationException(key + " " + why, Set.of(key));
        }
    }
}

package io.poisonguard.example.permit;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.Map;

/** Settings of the shipped example workload, under {@code poison-guard.example.}. */
@ConfigMapping(prefix = "poison-guard.example")
public interface ExampleConfig {

    /**
     * Whether the shipped example workload (job type {@code permit-report} and its simulated downstream) runs.
     * Off by default in production, where your own handlers take its place; on in dev and test.
     */
    @WithDefault("false")
    boolean enabled();

    /** Read schema version 1 (release 27's shape) with the compatibility reader. */
    @WithDefault("false")
    boolean legacyReader();

    Provider provider();

    interface Provider {
        /**
         * Calls per second permit-records takes (its documented quota); calls beyond it wait their
         * turn here instead of coming back as 429s.
         */
        @WithDefault("15")
        double rate();

        /** Simulated latency of each permit-records call. */
        @WithDefault("0ms")
        Duration latency();

        /** Scripted faults by permit id: fail:N, throttle:N, down, halt, hang:DURATION. */
        Map<String, String> faults();
    }
}

package io.poisonguard.testing;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.Supplier;

/** Clocks a test moves itself. */
public final class Clocks {
    private Clocks() {
    }

    /** A UTC clock that answers {@code now} each time it is read. */
    public static Clock reading(Supplier<Instant> now) {
        return new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
    }
}

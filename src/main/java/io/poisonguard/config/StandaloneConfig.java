package io.poisonguard.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;

/**
 * Loads {@link PoisonGuardConfig} as the service sees it at boot, without booting Quarkus, for
 * commands that lint a configuration: the classpath's application.properties (ordinal 250),
 * {@code config/application.properties} in the working directory (260), environment variables (300)
 * and system properties (400), under the {@code prod} profile unless {@code quarkus.profile} or
 * {@code QUARKUS_PROFILE} names another. Overrides given on a command line win over all of them.
 */
public final class StandaloneConfig {
    /** The profile of a packaged service. */
    public static final String DEFAULT_PROFILE = "prod";

    private StandaloneConfig() {
    }

    public static PoisonGuardConfig load(Map<String, String> overrides) {
        SmallRyeConfigBuilder builder = new SmallRyeConfigBuilder()
                .withProfile(profile(overrides))
                .withConverter(Duration.class, 200, new DurationConverter())
                .withMapping(PoisonGuardConfig.class)
                // The example workload's keys belong to its own mapping, which the command does not load.
                .withMappingIgnore("poison-guard.example.**")
                .addDefaultInterceptors()
                .addSystemSources()
                .withSources(new PropertiesConfigSource(overrides, "command line", 450));
        try {
            for (URL url : Collections.list(StandaloneConfig.class.getClassLoader().getResources("application.properties"))) {
                builder.withSources(new PropertiesConfigSource(url, 250));
            }
            Path local = Path.of("config", "application.properties");
            if (Files.isRegularFile(local)) {
                builder.withSources(new PropertiesConfigSource(local.toUri().toURL(), 260));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read application.properties", e);
        }
        return builder.build().getConfigMapping(PoisonGuardConfig.class);
    }

    /** Parses a duration the way configuration does: {@code 16h}, {@code 300s}, {@code 250ms}, {@code PT1H}. */
    public static Duration duration(String text) {
        return new DurationConverter().convert(text);
    }

    private static String profile(Map<String, String> overrides) {
        String profile = overrides.getOrDefault("quarkus.profile", System.getProperty("quarkus.profile", System.getenv("QUARKUS_PROFILE")));
        return profile == null || profile.isBlank() ? DEFAULT_PROFILE : profile;
    }
}

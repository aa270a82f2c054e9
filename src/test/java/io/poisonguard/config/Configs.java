package io.poisonguard.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Builds {@link PoisonGuardConfig} the way Quarkus would, without booting Quarkus: the shipped
 * {@code poison-guard.*} defaults of application.properties, overridden per test. Public so that
 * plain tests of the components a config sets up (the pipeline's stages) can build one too.
 */
public final class Configs {
    private final Map<String, String> properties = new HashMap<>(shippedDefaults());

    private Configs() {
    }

    public static Configs defaults() {
        return new Configs();
    }

    /** The un-profiled {@code poison-guard.*} lines of the application.properties the service ships with. */
    static Map<String, String> shippedDefaults() {
        Properties p = new Properties();
        try (InputStream in = Configs.class.getResourceAsStream("/application.properties")) {
            if (in == null) {
                throw new IllegalStateException("application.properties is not on the test classpath");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> m = new HashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("poison-guard.")) {
                m.put(key, p.getProperty(key));
            }
        }
        return m;
    }

    public Configs set(String key, String value) {
        properties.put(key, value);
        return this;
    }

    public PoisonGuardConfig build() {
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withConverter(Duration.class, 200, new DurationConverter())
                .withMapping(PoisonGuardConfig.class)
                .withSources(new PropertiesConfigSource(properties, "test", 500))
                .build();
        return config.getConfigMapping(PoisonGuardConfig.class);
    }
}

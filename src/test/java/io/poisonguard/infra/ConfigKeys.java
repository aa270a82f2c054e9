package io.poisonguard.infra;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * The service's configuration keys, read from its {@code @ConfigMapping} interfaces (so a key added to
 * the code is known here at once), and the environment variable names that set them, the Quarkus way:
 * upper case, every character other than a letter or digit replaced by {@code _}.
 */
final class ConfigKeys {
    /** {@code name} ends with {@code .*} for a map (one key per entry). */
    record Key(String name, String defaultValue) {
        boolean isMap() {
            return name.endsWith(".*");
        }

        boolean setBy(String env) {
            return isMap() ? env.startsWith(ConfigKeys.env(name.substring(0, name.length() - 2)) + "_")
                    : env.equals(ConfigKeys.env(name));
        }
    }

    /** Variables the AWS SDK's default chains read (credentials, region); not config keys. */
    static final Set<String> AWS_SDK_VARIABLES = Set.of("AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN", "AWS_PROFILE");
    /** Variables the JVM image's launcher (run-java.sh) reads: JVM flags, not config keys. */
    static final Set<String> JVM_LAUNCHER_VARIABLES = Set.of("JAVA_OPTS_APPEND", "GC_CONTAINER_OPTIONS");
    /** SmallRye JWT's keys for the operator API, documented in the README's configuration table. */
    static final Set<String> JWT_KEYS = Set.of("mp.jwt.verify.publickey.location", "mp.jwt.verify.publickey", "mp.jwt.verify.issuer");

    private final List<Key> keys;
    private final Set<String> frameworkKeys;

    private ConfigKeys(List<Key> keys, Set<String> frameworkKeys) {
        this.keys = keys;
        this.frameworkKeys = frameworkKeys;
    }

    static ConfigKeys load() {
        List<Key> keys = new ArrayList<>();
        Infra.production().stream()
                .filter(c -> c.isAnnotatedWith(ConfigMapping.class))
                .forEach(c -> {
                    Class<?> mapping = c.reflect();
                    walk(mapping.getAnnotation(ConfigMapping.class).prefix(), mapping, keys);
                });
        Set<String> framework = new TreeSet<>(applicationPropertiesFrameworkKeys());
        framework.addAll(JWT_KEYS);
        return new ConfigKeys(keys, framework);
    }

    List<Key> keys() {
        return keys;
    }

    Optional<Key> key(String name) {
        return keys.stream().filter(k -> k.name().equals(name)).findFirst();
    }

    /** The default of a key, as written in its {@code @WithDefault}. */
    String defaultOf(String name) {
        Key k = key(name).orElseThrow(() -> new IllegalArgumentException("no config key " + name));
        if (k.defaultValue() == null) {
            throw new IllegalArgumentException(name + " has no @WithDefault");
        }
        return k.defaultValue();
    }

    /**
     * Why {@code env} is not a variable the service reads, or empty when it is: a poison-guard key, a
     * Quarkus or MicroProfile key that application.properties sets, a JWT key, or one of the AWS SDK's
     * own variables.
     */
    Optional<String> unknownVariable(String env) {
        if (AWS_SDK_VARIABLES.contains(env) || JVM_LAUNCHER_VARIABLES.contains(env)) {
            return Optional.empty();
        }
        if (env.startsWith("POISON_GUARD_")) {
            if (keys.stream().anyMatch(k -> k.setBy(env))) {
                return Optional.empty();
            }
            String group = env.substring(0, env.indexOf('_', "POISON_GUARD_".length()) + 1);
            return Optional.of(env + " sets no poison-guard key; the keys near it: "
                    + keys.stream().map(Key::name).filter(k -> env(k).startsWith(group)).toList());
        }
        if (env.startsWith("QUARKUS_") || env.startsWith("MP_")) {
            return frameworkKeys.stream().anyMatch(k -> env(k).equals(env)) ? Optional.empty()
                    : Optional.of(env + " is not one of the framework keys the service uses: " + frameworkKeys);
        }
        return Optional.of(env + " is neither a config key nor an AWS SDK variable");
    }

    static String env(String key) {
        return key.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_");
    }

    static Duration duration(String value) {
        return DurationConverter.parseDuration(value);
    }

    private static void walk(String prefix, Class<?> type, List<Key> out) {
        for (Method m : type.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) || m.isDefault() || m.getParameterCount() > 0) {
                continue;
            }
            WithName withName = m.getAnnotation(WithName.class);
            String key = prefix + "." + (withName != null ? withName.value() : kebab(m.getName()));
            Class<?> returned = m.getReturnType();
            if (returned == java.util.Map.class) {
                out.add(new Key(key + ".*", null));
            } else if (returned.isInterface() && returned.getName().startsWith("io.poisonguard.")) {
                walk(key, returned, out);
            } else {
                WithDefault withDefault = m.getAnnotation(WithDefault.class);
                out.add(new Key(key, withDefault == null ? null : withDefault.value()));
            }
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    private static Set<String> applicationPropertiesFrameworkKeys() {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(Infra.ROOT.resolve("src/main/resources/application.properties"))) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Set<String> out = new TreeSet<>();
        for (String k : p.stringPropertyNames()) {
            String key = k.startsWith("%") ? k.substring(k.indexOf('.') + 1) : k;
            if (key.startsWith("quarkus.") || key.startsWith("mp.")) {
                out.add(key);
            }
        }
        return out;
    }
}

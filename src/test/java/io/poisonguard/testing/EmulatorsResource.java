package io.poisonguard.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Points a {@code @QuarkusTest} at the shared emulators (or, with {@code -Plocalstack}, at a
 * LocalStack container), with a fresh name prefix each time the
 * application starts, so every test class gets its own queues and tables.
 */
public class EmulatorsResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        boolean localstack = "localstack".equals(System.getProperty("emulators.backend"));
        Map<String, String> config = new HashMap<>(localstack ? LocalStackBackend.clientConfig() : Emulators.shared().clientConfig());
        config.put("poison-guard.prefix", "t" + UUID.randomUUID().toString().substring(0, 8));
        config.put("poison-guard.resources.create", "true");
        return config;
    }

    @Override
    public void stop() {
        // The emulators outlive one application; the JVM's shutdown hook stops them.
    }
}

package io.poisonguard.flows;

import io.poisonguard.testing.EmulatorsResource;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * Base of every flow test's profile: the emulators, and the overrides a test names. A distinct
 * profile class per test makes Quarkus start a fresh application with fresh queues and tables.
 */
public abstract class EmulatorProfile implements QuarkusTestProfile {

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(EmulatorsResource.class));
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of();
    }
}

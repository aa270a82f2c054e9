package io.poisonguard.api;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 12, item 5: a production boot with the operator API on and no verification key stops, naming the keys. */
class OpsGateTest {
    @Test
    void productionWithTheApiOnAndNoKeyStopsNamingTheKeys() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> OpsGate.check(true, LaunchMode.NORMAL, Optional.empty(), Optional.empty()));
        assertTrue(e.getConfigKeys().contains("mp.jwt.verify.publickey.location"), e.getMessage());
        assertTrue(e.getMessage().contains("poison-guard.ops-api.enabled=false"), e.getMessage());
        assertThrows(ConfigurationException.class, () -> OpsGate.check(true, LaunchMode.NORMAL, Optional.of(" "), Optional.empty()),
                "a blank location is no key");
    }

    @Test
    void aKeyOrTheApiSwitchedOffLetsProductionBoot() {
        assertDoesNotThrow(() -> OpsGate.check(true, LaunchMode.NORMAL, Optional.of("/etc/poison-guard/jwt/public.pem"), Optional.empty()));
        assertDoesNotThrow(() -> OpsGate.check(true, LaunchMode.NORMAL, Optional.empty(), Optional.of("MIIBIjANBg")));
        assertDoesNotThrow(() -> OpsGate.check(false, LaunchMode.NORMAL, Optional.empty(), Optional.empty()));
        assertDoesNotThrow(() -> OpsGate.check(true, LaunchMode.TEST, Optional.empty(), Optional.empty()), "tests generate their own keys");
    }
}

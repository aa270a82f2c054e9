package io.poisonguard.handler;

import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Per-type settings name types a handler takes; a misspelt one refuses the boot, naming the key. */
class JobHandlersTest {
    @Test
    void aDeadlineForATypeNoHandlerTakesRefusesTheBootNamingTheKey() {
        JobHandlers.checkTypesNamed(Set.of("permit-report"), Map.of("poison-guard.attempt.deadlines.\"permit-report\"", Set.of("permit-report")));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> JobHandlers.checkTypesNamed(Set.of("permit-report"),
                Map.of("poison-guard.attempt.deadlines.\"permit_report\"", Set.of("permit_report"))));
        assertTrue(e.getMessage().contains("poison-guard.attempt.deadlines.\"permit_report\"") && e.getMessage().contains("[permit-report]"),
                e.getMessage());
        assertThrows(ConfigurationException.class, () -> JobHandlers.checkTypesNamed(Set.of("permit-report"),
                Map.of("poison-guard.disposable-job-types", Set.of("permit-report", "thumbnail"))));
    }
}

package io.poisonguard.chaos;

import io.poisonguard.config.Names;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The chaos verdict line says what the run went through, not what it was asked to. */
class ChaosReportTest {
    static final Instant T0 = Instant.parse("2026-12-05T10:00:00Z");

    private static ChaosRun.Outcome run(int kills, Instant freezeStart, Instant freezeEnd) {
        ChaosSettings s = ChaosSettings.fromSystemProperties();
        return new ChaosRun.Outcome(s, new Names("cr"), List.of(), T0, T0, T0.plusSeconds(60), kills, 3, Map.of(), 3, freezeStart, freezeEnd,
                true, T0.plusSeconds(90), T0.plusSeconds(100), Path.of("target"));
    }

    @Test
    void aFreezeThatNeverHappenedFailsTheRunAndTheLineSaysNone() {
        assertTrue(!ChaosSettings.fromSystemProperties().freeze().isZero(), "the default run freezes DynamoDB");

        String verdict = ChaosReport.clean(run(2, null, null)).verdict();

        assertTrue(verdict.startsWith("VERDICT: FAIL") && verdict.contains("freeze never happened") && verdict.contains(" freeze=none "), verdict);
    }

    @Test
    void aFreezeThatHappenedIsReportedWithItsOwnLength() {
        String verdict = ChaosReport.clean(run(2, T0.plusSeconds(20), T0.plusSeconds(29))).verdict();

        assertTrue(verdict.startsWith("VERDICT: PASS") && verdict.contains(" freeze=9s "), verdict);
    }

    @Test
    void aRunInWhichNoKillLandedSaysSoOnItsVerdictLine() {
        String verdict = ChaosReport.clean(run(0, T0.plusSeconds(20), T0.plusSeconds(28))).verdict();

        assertTrue(verdict.contains("kills=0 (no SIGKILL landed: that path was not exercised)"), verdict);
    }
}

package io.poisonguard.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ladder report command in-process, against the application.properties the service ships with. */
class LadderReportCommandTest {
    private static final String THROTTLED = "poison-guard.failure.throttled.";

    /** Seed 002 on the throttled class; the cap lifts the shipped 15 m one to the SQS limit, as the seed had none. */
    private static final Map<String, String> SEED_002 = seed002();

    private static Map<String, String> seed002() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(THROTTLED + "base", "600s");
        m.put(THROTTLED + "multiplier", "2");
        m.put(THROTTLED + "jitter", "EQUAL");
        m.put(THROTTLED + "max-attempts", "10");
        m.put(THROTTLED + "cutoff", "16h");
        m.put(THROTTLED + "cap", "12h");
        return m;
    }

    record Run(int exit, String out, String err) {
    }

    private static Run run(List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new LadderReportCommand())
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    private static List<String> args(Map<String, String> overrides, String... options) {
        List<String> args = new ArrayList<>(List.of(options));
        overrides.forEach((k, v) -> args.add("-D" + k + "=" + v));
        return args;
    }

    @Test
    void seed002SettingsExitWith3AndNameTheDeadKey() {
        Run run = run(args(SEED_002, "--class", "throttled", "--chains", "20000"));

        assertEquals(LadderReportCommand.DEAD_SETTING, run.exit(), run.out() + run.err());
        assertTrue(run.out().contains("DEAD  poison-guard.failure.throttled.max-attempts=10 is a dead setting: attempt 10 can never be reached"),
                run.out());
        assertTrue(run.out().contains("1 dead setting: poison-guard.failure.throttled.max-attempts"), run.out());
        assertTrue(run.out().matches("(?s).*\\s8\\s+06:00:00\\s+12:00:00\\s+10:35:00\\s+STOP: cutoff.*"), run.out());
        assertTrue(run.out().contains("9-10"), run.out());
        assertTrue(run.out().contains("chains that reached max-attempts=10: 0"), run.out());
        assertFalse(run.out().contains("transient:"), "--class reports one class only");
    }

    @Test
    void seed002SettingsGivenAsSystemPropertiesAreReadLikeTheServiceReadsThem() {
        Map<String, String> saved = new LinkedHashMap<>();
        SEED_002.forEach((k, v) -> saved.put(k, System.setProperty(k, v)));
        try {
            Run run = run(List.of("--class", "throttled", "--chains", "2000"));

            assertEquals(LadderReportCommand.DEAD_SETTING, run.exit(), run.out() + run.err());
        } finally {
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
        SEED_002.keySet().forEach(k -> assertNull(System.getProperty(k), k + " was restored"));
    }

    @Test
    void theShippedDefaultsExitWith0() {
        Run run = run(List.of("--chains", "20000"));

        assertEquals(0, run.exit(), run.out() + run.err());
        assertTrue(run.out().contains("no dead settings"), run.out());
        for (String c : List.of("permanent", "transient", "throttled", "dependency-down", "crash", "admission")) {
            assertTrue(run.out().contains("OK    poison-guard.failure." + c + ".max-attempts="), c + " passes:\n" + run.out());
        }
    }

    @Test
    void underTheShippedFifteenMinuteCapSeed002sLimitIsReachable() {
        Map<String, String> uncapped = new LinkedHashMap<>(SEED_002);
        uncapped.remove(THROTTLED + "cap");

        Run run = run(args(uncapped, "--class", "throttled", "--chains", "2000"));

        assertEquals(0, run.exit(), run.out() + run.err());
        assertTrue(run.out().contains("cap 15m"), run.out());
    }

    @Test
    void theProdProfileIsTheDefaultAndAnotherCanBeNamed() {
        Run prod = run(List.of("--class", "throttled", "--chains", "100"));
        Run test = run(List.of("--class", "throttled", "--chains", "100", "-Dquarkus.profile=test"));

        assertTrue(prod.out().contains("base 15s"), prod.out());
        assertTrue(test.out().contains("base 1s"), "%test lines apply under the test profile:\n" + test.out());
    }

    @Test
    void attemptTimeIsAddedBeforeEveryRetry() {
        Run run = run(args(SEED_002, "--class", "throttled", "--chains", "100", "--attempt-time", "60s"));

        assertTrue(run.out().contains("attempt time 60s"), run.out());
        assertTrue(run.out().matches("(?s).*\\s2\\s+00:10:00\\s+00:20:00\\s+00:06:00\\s+retry scheduled.*"), run.out());
    }

    @Test
    void aValueTheServiceRefusesExitsWith1NamingTheKey() {
        Run run = run(args(Map.of(THROTTLED + "cap", "13h"), "--class", "throttled"));

        assertEquals(LadderReportCommand.BAD_CONFIGURATION, run.exit());
        assertTrue(run.err().contains("poison-guard.failure.throttled.cap"), run.err());
    }

    @Test
    void aMisspelledKeyExitsWith1NamingIt() {
        Run run = run(args(Map.of("poison-guard.failure.throtled.cap", "1h"), "--class", "throttled"));

        assertEquals(LadderReportCommand.BAD_CONFIGURATION, run.exit());
        assertTrue(run.err().contains("poison-guard.failure.throtled.cap"), run.err());
    }

    @Test
    void anUnknownClassIsAUsageError() {
        Run run = run(List.of("--class", "sometimes"));

        assertEquals(2, run.exit());
        assertTrue(run.err().contains("not a failure class"), run.err());
    }
}

package io.poisonguard.bench;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The priority the bench runs its consumers at: below the emulators unless told otherwise, read back from the process
 * itself so a report never names a priority its runs did not have.
 */
class ConsumerNiceTest {
    @Test
    void consumersYieldToTheEmulatorsUnlessToldOtherwise() {
        assertEquals(10, BenchIT.CONSUMER_NICE);
        assertEquals(List.of("nice", "-n", "10"), BenchIT.launcher());
    }

    @Test
    void theNiceFieldIsFoundPastACommandNameHoldingSpacesAndParentheses() {
        // Fields 3-19 of a stat line after "pid (comm) ": the nineteenth is the nice value, here 7.
        String stat = "4242 (java) x (y) S 1 4242 4242 0 -1 4194560 900 0 0 0 12 3 0 0 27 7 31 0 555 1000 100 0 0";
        assertEquals(7, BenchIT.niceOf(stat));
    }

    @Test
    void aProcessStartedThroughTheLauncherRunsThatMuchBelowThisJvm() throws Exception {
        Path own = Path.of("/proc", Long.toString(ProcessHandle.current().pid()), "stat");
        assumeTrue(Files.isReadable(own), "Linux's /proc is where the priority is read back");
        List<String> cmd = new ArrayList<>(BenchIT.launcher());
        cmd.addAll(List.of("sleep", "30"));
        Process p = new ProcessBuilder(cmd).start();
        try {
            int mine = BenchIT.niceOf(Files.readString(own, StandardCharsets.US_ASCII));
            int theirs = BenchIT.niceOf(Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"), StandardCharsets.US_ASCII));
            assertEquals(Math.min(19, mine + 10), theirs);
            BenchIT.checkNice(p.pid());
            // This JVM itself is not below itself: the check that guards every window refuses it.
            assertThrows(IllegalStateException.class, () -> BenchIT.checkNice(ProcessHandle.current().pid()));
        } finally {
            p.destroyForcibly().waitFor();
        }
    }
}

package io.poisonguard.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The priorities the bench runs at: the consumers at the bench JVM's own unless told otherwise, and each consumer's read
 * back from the process itself, so a report never names a priority its runs did not have.
 */
class ConsumerNiceTest {
    @Test
    void consumersRunAtTheBenchJvmsPriorityUnlessToldOtherwise() {
        assertEquals(0, BenchIT.CONSUMER_NICE);
        assertEquals(List.of(), BenchIT.launcher());
        assertEquals(List.of("nice", "-n", "10"), BenchIT.launcher(10));
        // A consumer may only yield: raising one above the emulators would need root and skew the other way.
        assertThrows(IllegalArgumentException.class, () -> BenchIT.launcher(-5));
    }

    @Test
    void theNiceFieldIsFoundPastACommandNameHoldingSpacesAndParentheses() {
        // Fields 3-19 of a stat line after "pid (comm) ": the nineteenth is the nice value, here 7.
        String stat = "4242 (java) x (y) S 1 4242 4242 0 -1 4194560 900 0 0 0 12 3 0 0 27 7 31 0 555 1000 100 0 0";
        assertEquals(7, BenchIT.niceOf(stat));
    }

    @Test
    void aProcessStartedThroughTheLauncherRunsThatMuchBelowThisJvm() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "Linux's /proc is where the priority is read back");
        int mine = BenchIT.niceOf(ProcessHandle.current().pid()).orElseThrow();
        List<String> cmd = new ArrayList<>(BenchIT.launcher(7));
        cmd.addAll(List.of("sleep", "30"));
        Process p = new ProcessBuilder(cmd).start();
        try {
            // Until nice has set the priority and exec'd the command, /proc shows the forked child at this JVM's priority.
            Path comm = Path.of("/proc", Long.toString(p.pid()), "comm");
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> Files.readString(comm).strip().equals("sleep"));
            assertEquals(Math.min(19, mine + 7), BenchIT.niceOf(p.pid()).orElseThrow());
            BenchIT.checkNice(p.pid(), 7);
            if (mine < 19) {
                // A process at this JVM's own priority is not 7 below it: the check that guards every window refuses it.
                assertThrows(IllegalStateException.class, () -> BenchIT.checkNice(ProcessHandle.current().pid(), 7));
            }
        } finally {
            p.destroyForcibly().waitFor();
        }
    }
}

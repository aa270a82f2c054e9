package io.poisonguard.chaos;

import java.time.Duration;
import java.util.Locale;

/**
 * Size, mix and timing of a chaos run. {@link #fromSystemProperties()} reads every value from a
 * {@code chaos.*} system property (Maven passes {@code -Dchaos.jobs=2000} through to the test JVM),
 * with defaults small enough for CI.
 *
 * @param workers        service JVMs
 * @param concurrency    jobs in flight per JVM
 * @param jobs           jobs sent in all (healthy ones fill what the other kinds leave)
 * @param sendRate       jobs sent per second (the workload arrives as a stream, so the chaos meets it)
 * @param killEvery      a random worker is SIGKILLed (and restarted) this often; zero: never
 * @param maxUnavailable the disruption budget: no kill while this many workers are down or still booting (1)
 * @param freeze         DynamoDB (dynalite) is frozen with SIGSTOP once for this long; zero: never
 * @param freezeAt       when the freeze starts, counted from the first send
 * @param poison         schema v1 jobs (PERMANENT: the legacy reader is off)
 * @param transientJobs  jobs whose provider call fails twice with 503, then works
 * @param throttled      jobs whose provider call answers 429 once, then works
 * @param crash          jobs whose provider call kills the JVM ({@code crashFault})
 * @param crashFault     {@code oom} (allocates until OutOfMemoryError; the JVM exits) or {@code halt}
 * @param hang           jobs whose provider call hangs ({@code hangFault}); they need a per-attempt deadline
 * @param hangFault      the hang fault, {@code hang:10m}
 * @param attemptDeadline {@code poison-guard.attempt.deadline} on the workers; empty: not set (the default without
 *                       hang jobs, since a release without per-attempt deadlines refuses to boot with the key); 2s with them
 * @param settleTimeout  the bound on waiting for every job to reach a terminal outcome, after the last send
 * @param seed           shuffles the workload and picks the workers to kill
 * @param fifoNotices    notices go to the FIFO queue ({@code poison-guard.notices.fifo}); a duplicate notice then fails the run
 * @param itemFormat     {@code poison-guard.ledger.item-format} on the workers: {@code attributes}, {@code compact}, or
 *                       {@code mixed} (the default: workers 1, 3, ... compact, 2, 4, ... attributes, so a job's item
 *                       changes format whenever another worker takes it up, as during a rolling switch of the setting)
 */
public record ChaosSettings(int workers, int concurrency, int jobs, double sendRate, Duration killEvery, int maxUnavailable, Duration freeze,
                            Duration freezeAt, int poison, int transientJobs, int throttled, int crash, String crashFault, int hang,
                            String hangFault, String attemptDeadline, Duration settleTimeout, long seed, String tenant,
                            boolean fifoNotices, String itemFormat) {

    public ChaosSettings {
        int special = poison + transientJobs + throttled + crash + hang;
        if (special > jobs) {
            throw new IllegalArgumentException("chaos.jobs=" + jobs + " is less than the " + special + " non-healthy jobs of the mix");
        }
        if (workers < 1 || concurrency < 1 || sendRate <= 0 || maxUnavailable < 1) {
            throw new IllegalArgumentException("chaos.workers, chaos.concurrency, chaos.send-rate and chaos.max-unavailable must be positive");
        }
        if (!crashFault.equals("oom") && !crashFault.equals("halt")) {
            throw new IllegalArgumentException("chaos.crash-fault must be oom or halt, not " + crashFault);
        }
        if (!java.util.Set.of("attributes", "compact", "mixed").contains(itemFormat)) {
            throw new IllegalArgumentException("chaos.item-format must be attributes, compact or mixed, not " + itemFormat);
        }
    }

    public static ChaosSettings fromSystemProperties() {
        int jobs = integer("chaos.jobs", 300);
        double rate = Double.parseDouble(System.getProperty("chaos.send-rate", "5"));
        Duration sendWindow = Duration.ofMillis((long) (jobs / rate * 1000));
        Duration freezeAtDefault = Duration.ofMillis(Math.max(5_000, sendWindow.toMillis() * 2 / 5));
        int crash = integer("chaos.crash", Math.max(2, jobs / 500));
        return new ChaosSettings(
                integer("chaos.workers", 3),
                integer("chaos.concurrency", 8),
                jobs,
                rate,
                duration("chaos.kill-every", "6s"),
                integer("chaos.max-unavailable", 1),
                duration("chaos.freeze", "8s"),
                System.getProperty("chaos.freeze-at") == null ? freezeAtDefault : duration("chaos.freeze-at", "0s"),
                integer("chaos.poison", Math.max(1, jobs / 50)),
                integer("chaos.transient", Math.max(1, jobs / 50)),
                integer("chaos.throttled", Math.max(1, jobs / 50)),
                crash,
                System.getProperty("chaos.crash-fault", "oom").trim().toLowerCase(Locale.ROOT),
                integer("chaos.hang", Math.max(2, jobs / 500)),
                System.getProperty("chaos.hang-fault", "hang:10m"),
                // Short, so hang jobs end as TIMEOUT within seconds; healthy jobs take milliseconds.
                System.getProperty("chaos.attempt-deadline", "2s").trim(),
                duration("chaos.settle-timeout", (60 + jobs / 10) + "s"),
                Long.parseLong(System.getProperty("chaos.seed", Long.toString(System.nanoTime() % 100_000))),
                System.getProperty("chaos.tenant", "tenant-x"),
                Boolean.parseBoolean(System.getProperty("chaos.fifo-notices", "false")),
                System.getProperty("chaos.item-format", "mixed").trim().toLowerCase(Locale.ROOT));
    }

    /** How long sending the whole workload takes at {@link #sendRate}. */
    public Duration sendWindow() {
        return Duration.ofMillis((long) (jobs / sendRate * 1000));
    }

    /** The ledger item format worker {@code worker} (numbered from 1) writes. */
    public String itemFormatOf(int worker) {
        return itemFormat.equals("mixed") ? (worker % 2 == 1 ? "compact" : "attributes") : itemFormat;
    }

    public int healthy() {
        return jobs - poison - transientJobs - throttled - crash - hang;
    }

    public String describe() {
        return String.format(Locale.ROOT, "%d workers x concurrency %d, %d jobs at %.1f/s (healthy %d, transient %d, throttled %d, poison %d, "
                        + "%s %d, hang %d), kill every %s (at most %d down), DynamoDB freeze %s at +%s, attempt deadline %s, ledger items %s, seed %d",
                workers, concurrency, jobs, sendRate, healthy(), transientJobs, throttled, poison, crashFault, crash, hang,
                text(killEvery), maxUnavailable, text(freeze), text(freezeAt), attemptDeadline.isEmpty() ? "unset" : attemptDeadline, itemFormat, seed);
    }

    static String text(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }

    private static int integer(String key, int dflt) {
        String v = System.getProperty(key);
        return v == null || v.isBlank() ? dflt : Integer.parseInt(v.trim());
    }

    /** {@code 6s}, {@code 500ms}, {@code 2m}, or a bare number of seconds. */
    static Duration duration(String key, String dflt) {
        String v = System.getProperty(key);
        String s = (v == null || v.isBlank() ? dflt : v).trim().toLowerCase(Locale.ROOT);
        try {
            if (s.matches("\\d+")) {
                return Duration.ofSeconds(Long.parseLong(s));
            }
            if (s.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
            }
            return Duration.parse("PT" + s.toUpperCase(Locale.ROOT));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(key + "=" + s + " is not a duration such as 6s, 500ms or 2m", e);
        }
    }
}

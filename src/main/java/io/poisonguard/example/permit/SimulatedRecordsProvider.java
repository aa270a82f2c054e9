package io.poisonguard.example.permit;

import io.poisonguard.failure.JobFailure;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import io.quarkus.runtime.configuration.ConfigurationException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A stand-in permit-records service with scripted faults, so the demo and the tests can produce
 * every failure class on purpose. Faults are set per permit id, from configuration
 * ({@code poison-guard.example.provider.faults."P-1"=fail:2}) or by tests:
 * <ul>
 *   <li>{@code fail:N}: the first N calls answer 503 (TRANSIENT)</li>
 *   <li>{@code throttle:N}: the first N calls answer 429 (THROTTLED)</li>
 *   <li>{@code down}: every call finds the service unavailable (DEPENDENCY_DOWN)</li>
 *   <li>{@code halt}: the call kills the JVM at once, like the OOM killer would (CRASH)</li>
 *   <li>{@code hang:DURATION}: the call blocks that long (a stuck worker; ends at the attempt's deadline as TIMEOUT)</li>
 *   <li>{@code oom}: the call allocates memory until the JVM throws OutOfMemoryError (seed 000's 4 MB
 *       input); with {@code -XX:+ExitOnOutOfMemoryError} the process exits, as it should</li>
 *   <li>{@code illegal-argument}: the call throws the same IllegalArgumentException every time, as a
 *       handler bug or a broken setting would (a bad deploy)</li>
 * </ul>
 * The permit id {@code *} scripts a fault for every permit without one of its own.
 * It also counts calls per permit id, so tests can check what reached the downstream.
 */
@Singleton
public class SimulatedRecordsProvider implements RecordsProvider {
    private static final Logger LOG = Logger.getLogger(SimulatedRecordsProvider.class);

    private final Map<String, String> faults = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final AtomicReference<Duration> latency = new AtomicReference<>(Duration.ZERO);
    private final java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.concurrent.ConcurrentLinkedQueue<Long> callTimes = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicInteger queued = new AtomicInteger();
    static final int MAX_TRACKED = 100_000;
    static final int MAX_TIMES = 100_000;

    public SimulatedRecordsProvider(ExampleConfig config) {
        faults.putAll(config.provider().faults());
        latency.set(config.provider().latency());
        faults.forEach(SimulatedRecordsProvider::validate);
    }

    /** Sets (or with null clears) the fault for one permit id. */
    public void script(String permitId, String fault) {
        if (fault == null) {
            faults.remove(permitId);
        } else {
            validate(permitId, fault);
            faults.put(permitId, fault);
        }
    }

    /** Takes the whole service down (every call DEPENDENCY_DOWN) or brings it back. */
    public void down(boolean isDown) {
        down.set(isDown);
    }

    /** The most calls that arrived within any one second, as a quota-enforcing service would count them. */
    public int maxCallsInAnySecond() {
        java.util.List<Long> times = callTimes.stream().sorted().toList();
        int best = 0;
        int start = 0;
        for (int end = 0; end < times.size(); end++) {
            while (times.get(end) - times.get(start) >= 1_000_000_000L) {
                start++;
            }
            best = Math.max(best, end - start + 1);
        }
        return best;
    }

    /** Every call so far, across permits. */
    public int totalCalls() {
        return (int) total.get();
    }

    public int calls(String permitId) {
        AtomicInteger n = calls.get(permitId);
        return n == null ? 0 : n.get();
    }

    @Override
    public String standing(String tenant, String permitId) {
        // Bounded: per-permit counts for at most MAX_TRACKED permits (scripted ones always), call times for the last MAX_TIMES calls.
        boolean tracked = calls.containsKey(permitId) || faults.containsKey(permitId) || calls.size() < MAX_TRACKED;
        int call = tracked ? calls.computeIfAbsent(permitId, k -> new AtomicInteger()).incrementAndGet() : 1;
        total.incrementAndGet();
        callTimes.add(System.nanoTime());
        if (queued.incrementAndGet() > MAX_TIMES && callTimes.poll() != null) {
            queued.decrementAndGet();
        }
        sleep(latency.get());
        if (down.get()) {
            throw JobFailure.dependencyDown("permit-records is unavailable");
        }
        String fault = faults.getOrDefault(permitId, faults.get(EVERY_PERMIT));
        if (fault != null) {
            String[] f = fault.split(":", 2);
            switch (f[0]) {
                case "fail" -> {
                    if (call <= Integer.parseInt(f[1])) {
                        throw JobFailure.transientFailure("permit-records answered 503 (call " + call + ")");
                    }
                }
                case "throttle" -> {
                    if (call <= Integer.parseInt(f[1])) {
                        throw JobFailure.throttled("permit-records answered 429: rate limit exceeded (call " + call + ")");
                    }
                }
                case "down" -> throw JobFailure.dependencyDown("permit-records is unavailable");
                case "halt" -> {
                    LOG.warnf("Simulated crash: halting the JVM while handling permit %s", permitId);
                    Runtime.getRuntime().halt(137);
                }
                case "hang" -> sleep(Duration.parse("PT" + f[1].toUpperCase()));
                case "oom" -> exhaustMemory();
                case "illegal-argument" -> throw new IllegalArgumentException("permit-records client: unsupported endpoint scheme");
                default -> throw new IllegalStateException("unreachable: validated fault " + f[0]);
            }
        }
        return Math.floorMod(permitId.hashCode(), 5) == 0 ? "EXPIRED" : "ISSUED";
    }

    /** The key that scripts a fault for every permit id. */
    public static final String EVERY_PERMIT = "*";

    /** Refuses a fault the provider does not know, naming its configuration key. */
    static void validate(String permitId, String fault) {
        boolean ok = fault.matches("(fail|throttle):\\d+|down|halt|oom|illegal-argument|hang:\\d+(ms|s|m)?");
        if (!ok) {
            String key = "poison-guard.example.provider.faults.\"" + permitId + "\"";
            throw new ConfigurationException(key + ": '" + fault
                    + "' is not one of fail:N, throttle:N, down, halt, oom, illegal-argument, hang:DURATION", Set.of(key));
        }
    }

    /** Holds ever more memory until the JVM gives up; the list is live until the error is thrown. */
    private static void exhaustMemory() {
        // One array larger than the whole heap fails at once with "Java heap space" (no slow climb through
        // many collections, which under load can outlast the attempt's deadline and read as a hang).
        long words = Math.min(Integer.MAX_VALUE - 16L, Runtime.getRuntime().maxMemory() / Long.BYTES + 1);
        long[] whole = new long[(int) words];
        List<long[]> hoard = new ArrayList<>();
        hoard.add(whole);
        while (true) {
            hoard.add(new long[4 * 1024 * 1024]);
        }
    }

    private static void sleep(Duration d) {
        if (d.isZero()) {
            return;
        }
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw JobFailure.transientFailure("interrupted while waiting for permit-records");
        }
    }
}

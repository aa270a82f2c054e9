package io.poisonguard.pipeline;

import io.poisonguard.config.PoisonGuardConfig;
import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * The DynamoDB client's connection pool, sized from the worker's own bound unless
 * {@code quarkus.dynamodb.sync-client.apache.max-connections} is set.
 *
 * <p>Each message a worker has unfinished may be making one ledger call at a time (its intake write, or its outcome
 * and quarantine writes), and a worker has at most {@code 2 × (concurrency + reserve)} unfinished
 * ({@link Poller#settlingPlaces}). A call that finds every connection taken waits in the pool for one, and with the
 * SDK's default of 50 connections that is where ledger writes waited at concurrency 8: 60 of 74 timed waits in
 * thread dumps of the bench's worker, and a pool of 128 won both rounds side by side (BENCHMARKS.md, twenty-second
 * table). The pool here holds one connection per unfinished message plus {@link #BESIDE_MESSAGES} for the calls made
 * beside them (the heartbeat's lease extensions, the dead-letter sweep, the operators' API), never fewer than the
 * SDK's 50. Connections are opened as calls need them, so an idle worker holds no more than before.
 *
 * <p>A configuration source rather than a bean, because the client reads its pool size at boot: it is given at
 * ordinal 200, above the extension's default and below application.properties (250), environment variables (300)
 * and system properties (400), so an operator's value always wins. Registered in
 * {@code META-INF/services/io.smallrye.config.ConfigSourceFactory}.
 */
public final class LedgerConnections implements ConfigSourceFactory {
    /** The client key this source gives a default for. */
    public static final String KEY = "quarkus.dynamodb.sync-client.apache.max-connections";
    /** The AWS SDK's default pool (ApacheHttpClient), the floor. */
    public static final int SDK_DEFAULT = 50;
    /** Connections for the calls made beside the messages: heartbeats, the dead-letter sweep, the operators' API. */
    static final int BESIDE_MESSAGES = 16;
    private static final int ORDINAL = 200;

    /** The pool a worker of {@code concurrency} with {@code prefetch} (unset: sized while it runs) needs. */
    public static int forWorker(int concurrency, OptionalInt prefetch) {
        Reserve reserve = prefetch.isPresent() ? Reserve.fixed(concurrency, prefetch.getAsInt()) : Reserve.sized(concurrency);
        int held = concurrency + reserve.ceiling();
        int unfinished = held + Poller.settlingPlaces(concurrency, reserve.ceiling());
        return Math.max(SDK_DEFAULT, unfinished + BESIDE_MESSAGES);
    }

    /**
     * What to tell the operator at boot about a pool of {@code configured} connections: a warning, naming the key,
     * when it is smaller than the worker's bound (calls will wait for connections under a backlog), else its size.
     */
    public static PoolLine describe(int configured, int concurrency, OptionalInt prefetch) {
        int bound = forWorker(concurrency, prefetch);
        if (configured < bound) {
            return new PoolLine(true, KEY + "=" + configured + " is below the " + bound + " connections a worker at concurrency " + concurrency
                    + " may use at once: under a backlog its ledger calls will wait for a free connection");
        }
        return new PoolLine(false, "DynamoDB connection pool: " + configured + " connections (" + bound + " for concurrency " + concurrency + ")");
    }

    /** The boot log's line about the pool, and whether it is a warning. */
    public record PoolLine(boolean warning, String text) {
    }

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        // An unreadable concurrency or prefetch is left for the configuration mapping to refuse at boot, naming the
        // key; the pool then takes the default's size rather than failing first with a less useful message.
        int concurrency = number(context, "poison-guard.consumer.concurrency")
                .orElse(Integer.parseInt(PoisonGuardConfig.Consumer.DEFAULT_CONCURRENCY));
        OptionalInt prefetch = number(context, "poison-guard.consumer.prefetch");
        if (concurrency < 1 || (prefetch.isPresent() && prefetch.getAsInt() < 0)) {
            concurrency = Integer.parseInt(PoisonGuardConfig.Consumer.DEFAULT_CONCURRENCY);
            prefetch = OptionalInt.empty();
        }
        return List.of(new PropertiesConfigSource(Map.of(KEY, String.valueOf(forWorker(concurrency, prefetch))),
                "poison-guard: the DynamoDB pool sized from consumer.concurrency", ORDINAL));
    }

    private static OptionalInt number(ConfigSourceContext context, String key) {
        ConfigValue value = context.getValue(key);
        if (value == null || value.getValue() == null) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of(Integer.parseInt(value.getValue().trim()));
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }
}

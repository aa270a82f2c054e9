package io.poisonguard.observability;

import java.util.Map;

/** Port: approximate depth (visible + in flight + delayed) of the main and dead-letter queues. */
public interface QueueDepthSource {

    /** Depth by queue: keys {@code jobs} and {@code dlq}. */
    Map<String, Long> read();
}

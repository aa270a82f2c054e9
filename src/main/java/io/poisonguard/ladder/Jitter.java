package io.poisonguard.ladder;

/** How a retry delay is spread below its ceiling (the AWS "Exponential Backoff and Jitter" taxonomy). */
public enum Jitter {
    /** Uniform in [0, ceiling]: fewest collisions and least total work; the default. */
    FULL,
    /** Half the ceiling plus uniform in [0, ceiling/2]: guarantees some wait. */
    EQUAL,
    /** Exactly the ceiling: predictable, and synchronises retries of items that failed together. */
    NONE
}

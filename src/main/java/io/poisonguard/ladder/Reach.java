package io.poisonguard.ladder;

/** Whether chains get as far as the attempt limit before a window stops them. */
public enum Reach {
    /** Even the slowest climb reaches the limit: it is the stop condition of every chain. */
    ALWAYS,
    /** The fastest climb reaches the limit and the slowest does not: jitter decides. */
    SOMETIMES,
    /** Not even the fastest climb reaches it: a dead setting that no chain reads. */
    NEVER
}

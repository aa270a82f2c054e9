package io.poisonguard.config;

/** Queue and table names, all derived from one prefix so several deployments can share an account. */
public record Names(String prefix, boolean fifoNotices) {
    public Names(String prefix) {
        this(prefix, false);
    }

    public String jobsQueue() {
        return prefix + "-jobs";
    }

    public String deadLetterQueue() {
        return prefix + "-jobs-dlq";
    }

    /** {@code <prefix>-notices}, or {@code <prefix>-notices.fifo} when notices go to a FIFO queue. */
    public String noticesQueue() {
        return prefix + (fifoNotices ? "-notices.fifo" : "-notices");
    }

    public String ledgerTable() {
        return prefix + "-ledger";
    }

    public String quarantineTable() {
        return prefix + "-quarantine";
    }

    public String payloadsTable() {
        return prefix + "-payloads";
    }

    public String auditTable() {
        return prefix + "-audit";
    }

    /** Bulk replays' progress, readable from any instance. */
    public String bulkReplaysTable() {
        return prefix + "-bulk-replays";
    }

    public String tenantsTable() {
        return prefix + "-tenants";
    }
}

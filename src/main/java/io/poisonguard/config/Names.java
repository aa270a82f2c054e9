package io.poisonguard.config;

/** Queue and table names, all derived from one prefix so several deployments can share an account. */
public record Names(String prefix) {
    public String jobsQueue() {
        return prefix + "-jobs";
    }

    public String deadLetterQueue() {
        return prefix + "-jobs-dlq";
    }

    public String noticesQueue() {
        return prefix + "-notices";
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

    public String effectsTable() {
        return prefix + "-effects";
    }

    public String auditTable() {
        return prefix + "-audit";
    }

    public String tenantsTable() {
        return prefix + "-tenants";
    }
}

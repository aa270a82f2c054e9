package io.poisonguard.api;

/** The roles (JWT "groups") the operator API knows. */
public final class Roles {
    /** Reads quarantine records, ledger records, audit entries and dry runs. */
    public static final String VIEWER = "viewer";
    /** Replays and resolves; includes everything a viewer may do. */
    public static final String OPERATOR = "operator";
    /** May read a quarantined payload through the audited secure path; nothing else. */
    public static final String PAYLOAD_READER = "payload-reader";
    /** Maintains the tenant directory. */
    public static final String ADMIN = "admin";

    private Roles() {
    }
}

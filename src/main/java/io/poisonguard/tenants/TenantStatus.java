package io.poisonguard.tenants;

/** Whether a tenant may have work run at all. */
public enum TenantStatus {
    ACTIVE,
    /** No job of this tenant may be replayed or run as a replay. */
    SUSPENDED
}

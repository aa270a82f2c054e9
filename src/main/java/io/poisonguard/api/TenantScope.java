package io.poisonguard.api;

import io.poisonguard.ledger.JobKey;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The tenants one operator token covers, from its {@code tenants} claim: a list of tenant names, or {@code "*"}
 * for every tenant. What a token may list, view, replay, resolve and read is limited to these; a tenant
 * outside them answers 403 when named and is invisible when not.
 */
public record TenantScope(boolean everyTenant, Set<String> tenants) {
    /** The claim that carries the scope. */
    public static final String CLAIM = "tenants";
    public static final String EVERY_TENANT = "*";

    public TenantScope {
        tenants = Set.copyOf(tenants);
    }

    /**
     * The scope a claim value grants, or why the value is not a scope. A claim may be a single string or
     * a list of strings; every name must follow the tenant rule, and {@code *} may not be mixed with names.
     */
    public static Optional<TenantScope> parse(Object claim, StringBuilder why) {
        List<String> names;
        if (claim instanceof String s) {
            names = List.of(s);
        } else if (claim instanceof Collection<?> c && c.stream().allMatch(o -> o instanceof String)) {
            names = c.stream().map(String.class::cast).toList();
        } else {
            why.append(claim == null ? "the token has no tenants claim" : "the token's tenants claim is not a list of names");
            return Optional.empty();
        }
        if (names.isEmpty()) {
            why.append("the token's tenants claim is empty");
            return Optional.empty();
        }
        if (names.contains(EVERY_TENANT)) {
            if (names.size() > 1) {
                why.append("the token's tenants claim mixes * with tenant names");
                return Optional.empty();
            }
            return Optional.of(new TenantScope(true, Set.of()));
        }
        if (!names.stream().allMatch(JobKey::validTenant)) {
            why.append("the token's tenants claim holds a name that is not a tenant");
            return Optional.empty();
        }
        return Optional.of(new TenantScope(false, new TreeSet<>(names)));
    }

    /** The scope of the caller's token; none for a caller without a JWT. */
    public static TenantScope of(io.quarkus.security.identity.SecurityIdentity identity) {
        if (identity.getPrincipal() instanceof org.eclipse.microprofile.jwt.JsonWebToken jwt) {
            return parse(TokenPolicy.claimValue(jwt.getClaim(CLAIM)), new StringBuilder()).orElse(new TenantScope(false, Set.of()));
        }
        return new TenantScope(false, Set.of());
    }

    public boolean permits(String tenant) {
        return everyTenant || (tenant != null && tenants.contains(tenant));
    }

    /** The one tenant this scope covers, if it covers exactly one. */
    public Optional<String> single() {
        return !everyTenant && tenants.size() == 1 ? Optional.of(tenants.iterator().next()) : Optional.empty();
    }

    @Override
    public String toString() {
        return everyTenant ? EVERY_TENANT : String.join(",", new TreeSet<>(tenants));
    }
}

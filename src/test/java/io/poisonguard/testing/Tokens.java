package io.poisonguard.testing;

import io.smallrye.jwt.build.Jwt;

import java.util.Set;

/** Signed tokens for the operator API, as an identity provider would issue them. */
public final class Tokens {
    private Tokens() {
    }

    /** A token of every tenant ({@code tenants: "*"}). */
    public static String of(String subject, String... roles) {
        return scoped(subject, java.util.List.of("*"), roles);
    }

    /**
     * A token of every tenant whose display claims ({@code upn}, {@code preferred_username}) say {@code claimedName} while
     * its subject is {@code subject}: an identity provider that lets users edit their display name issues such tokens.
     */
    public static String named(String subject, String claimedName, String... roles) {
        return Jwt.issuer("poison-guard").audience("poison-guard").upn(claimedName).preferredUserName(claimedName).subject(subject)
                .groups(Set.of(roles)).claim("tenants", java.util.List.of("*")).expiresIn(600).sign();
    }

    /** A token whose {@code tenants} claim lists these tenants. */
    public static String scoped(String subject, java.util.List<String> tenants, String... roles) {
        return Jwt.issuer("poison-guard").audience("poison-guard").upn(subject).subject(subject).groups(Set.of(roles))
                .claim("tenants", tenants).expiresIn(600).sign();
    }
}

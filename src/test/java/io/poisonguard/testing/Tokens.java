package io.poisonguard.testing;

import io.smallrye.jwt.build.Jwt;

import java.util.Set;

/** Signed tokens for the operator API, as an identity provider would issue them. */
public final class Tokens {
    private Tokens() {
    }

    public static String of(String subject, String... roles) {
        return Jwt.issuer("poison-guard").audience("poison-guard").upn(subject).subject(subject).groups(Set.of(roles)).expiresIn(600).sign();
    }
}

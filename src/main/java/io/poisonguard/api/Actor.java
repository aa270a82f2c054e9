package io.poisonguard.api;

import io.quarkus.security.identity.SecurityIdentity;

/**
 * Who is acting, as audit entries, logs and alerts show it: the token's principal with control characters
 * replaced (a newline in {@code sub} must not forge a log line) and cut to {@value #MAX_CHARS} characters.
 * Every operator endpoint names its actor through here.
 */
final class Actor {
    static final int MAX_CHARS = 128;

    private Actor() {
    }

    static String of(SecurityIdentity identity) {
        String name = identity.getPrincipal().getName();
        String printable = name == null ? "unknown" : name.replaceAll("\\p{Cntrl}", "?");
        return printable.length() > MAX_CHARS ? printable.substring(0, MAX_CHARS) + "…" : printable;
    }
}

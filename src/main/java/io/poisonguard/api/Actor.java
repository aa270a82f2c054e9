package io.poisonguard.api;

import io.quarkus.security.identity.SecurityIdentity;

/**
 * Who is acting, as audit entries, logs and alerts show it: the token's subject ({@code sub}) with control characters
 * replaced (a newline in {@code sub} must not forge a log line) and cut to {@value #MAX_CHARS} characters.
 * Every operator endpoint names its actor through here.
 */
final class Actor {
    static final int MAX_CHARS = 128;

    private Actor() {
    }

    static String of(SecurityIdentity identity) {
        // The subject, which the identity provider fixes and every token must carry (TokenPolicy): the principal's name
        // would be upn or preferred_username first, display claims some providers let their users edit.
        String name = identity.getPrincipal() instanceof org.eclipse.microprofile.jwt.JsonWebToken jwt && jwt.getSubject() != null
                ? jwt.getSubject() : identity.getPrincipal().getName();
        String printable = name == null ? "unknown" : name.replaceAll("\\p{Cntrl}", "?");
        return printable.length() > MAX_CHARS ? printable.substring(0, MAX_CHARS) + "…" : printable;
    }
}

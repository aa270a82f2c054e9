package io.poisonguard.api;

import io.poisonguard.config.PoisonGuardConfig;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.SecurityIdentityAugmentor;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * The operator API's token policy, on top of signature and issuer: a token must name this service as its
 * audience, carry {@code sub}, {@code iat}, {@code exp} and {@code groups}, not be issued in the future, and
 * not be valid for longer than {@code tokens.max-lifetime}, and carry a {@code tenants} claim (tenant names, or
 * {@code *}; see {@link TenantScope}). A token that breaks it is unauthenticated (401), whatever its roles.
 */
@ApplicationScoped
public class TokenPolicy implements SecurityIdentityAugmentor {
    private static final Logger LOG = Logger.getLogger(TokenPolicy.class);

    private final String audience;
    private final Duration maxLifetime;
    private final Duration skew;
    private final Clock clock;

    public TokenPolicy(PoisonGuardConfig config, Clock clock) {
        this.audience = config.tokens().audience();
        this.maxLifetime = config.tokens().maxLifetime();
        this.skew = config.tokens().clockSkew();
        this.clock = clock;
    }

    @Override
    public Uni<SecurityIdentity> augment(SecurityIdentity identity, AuthenticationRequestContext context) {
        if (identity.isAnonymous() || !(identity.getPrincipal() instanceof JsonWebToken jwt)) {
            return Uni.createFrom().item(identity);
        }
        // The verified principal fills in an empty groups claim for a token without one: the signed payload must carry it.
        Optional<String> refusal = refusal(jwt.getAudience(), jwt.getSubject(), jwt.getIssuedAtTime(), jwt.getExpirationTime(),
                signedClaims(jwt.getRawToken()).containsKey("groups") ? jwt.getGroups() : null, clock.instant().getEpochSecond());
        StringBuilder scopeRefusal = new StringBuilder();
        if (refusal.isEmpty() && TenantScope.parse(claimValue(jwt.getClaim(TenantScope.CLAIM)), scopeRefusal).isEmpty()) {
            refusal = Optional.of(scopeRefusal.toString());
        }
        if (refusal.isPresent()) {
            LOG.infof("Operator API token refused: %s", refusal.get());
            return Uni.createFrom().failure(new AuthenticationFailedException(refusal.get()));
        }
        return Uni.createFrom().item(identity);
    }

    /** The claims of a token as signed (its verified payload), or none when it does not parse. */
    static jakarta.json.JsonObject signedClaims(String rawToken) {
        String[] parts = rawToken == null ? new String[0] : rawToken.split("\\.");
        if (parts.length < 2) {
            return jakarta.json.JsonValue.EMPTY_JSON_OBJECT;
        }
        try (jakarta.json.JsonReader reader = jakarta.json.Json.createReader(new java.io.ByteArrayInputStream(
                java.util.Base64.getUrlDecoder().decode(parts[1])))) {
            return reader.readObject();
        } catch (RuntimeException e) {
            return jakarta.json.JsonValue.EMPTY_JSON_OBJECT;
        }
    }

    /** A claim as plain Java values: JSON strings and arrays of strings arrive as JSON-P types. */
    static Object claimValue(Object claim) {
        if (claim instanceof jakarta.json.JsonString s) {
            return s.getString();
        }
        if (claim instanceof jakarta.json.JsonArray a) {
            return a.stream().map(v -> v instanceof jakarta.json.JsonString s ? (Object) s.getString() : v).toList();
        }
        if (claim instanceof java.util.Collection<?> c) {
            return c.stream().map(TokenPolicy::claimValue).toList();
        }
        return claim;
    }

    /** Why a token with these claims is refused, if it is (times in epoch seconds; 0 means absent). */
    Optional<String> refusal(Set<String> aud, String sub, long iat, long exp, Set<String> groups, long now) {
        if (aud == null || !aud.contains(audience)) {
            return Optional.of("the token's audience does not name this service");
        }
        if (sub == null || sub.isBlank()) {
            return Optional.of("the token has no subject");
        }
        if (iat <= 0 || exp <= 0) {
            return Optional.of("the token lacks iat or exp");
        }
        if (groups == null) {
            return Optional.of("the token has no groups claim");
        }
        if (iat > now + skew.toSeconds()) {
            return Optional.of("the token is issued in the future");
        }
        if (exp - iat > maxLifetime.toSeconds()) {
            return Optional.of("the token is valid for longer than " + maxLifetime);
        }
        return Optional.empty();
    }
}

package io.poisonguard.api;

import io.poisonguard.config.PoisonGuardConfig;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.config.Config;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;
import org.jboss.logging.Logger;

import java.util.Optional;
import java.util.Set;

/**
 * The operator API's outer rules. A production boot with the API on and no token verification key stops,
 * naming the keys (every call would be refused, silently). With {@code ops-api.enabled=false} every {@code /ops}
 * path answers 404. Every operator API answer carries {@code Cache-Control: no-store}: payloads and records
 * must not be kept by a browser or a proxy; and a {@code Date} (the server's clock, which the console reads ages by).
 */
@ApplicationScoped
public class OpsGate {
    private static final Logger LOG = Logger.getLogger(OpsGate.class);
    static final String KEY_LOCATION = "mp.jwt.verify.publickey.location";
    static final String KEY_TEXT = "mp.jwt.verify.publickey";
    /** HTTP's date format (IMF-fixdate). */
    static final java.time.format.DateTimeFormatter HTTP_DATE = java.time.format.DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", java.util.Locale.US).withZone(java.time.ZoneOffset.UTC);

    private final boolean enabled;

    public OpsGate(PoisonGuardConfig config) {
        this.enabled = config.opsApi().enabled();
    }

    void onStart(@Observes StartupEvent event, Config config) {
        check(enabled, LaunchMode.current(), config.getOptionalValue(KEY_LOCATION, String.class),
                config.getOptionalValue(KEY_TEXT, String.class));
        LOG.infof("Operator API: %s", enabled ? "on" : "off (poison-guard.ops-api.enabled=false)");
    }

    /** Stops a production boot that would serve an operator API no token can pass. */
    static void check(boolean enabled, LaunchMode mode, Optional<String> keyLocation, Optional<String> key) {
        boolean hasKey = keyLocation.filter(s -> !s.isBlank()).isPresent() || key.filter(s -> !s.isBlank()).isPresent();
        if (enabled && mode == LaunchMode.NORMAL && !hasKey) {
            throw new ConfigurationException("The operator API is on but no token verification key is set: set " + KEY_LOCATION
                    + " (or " + KEY_TEXT + "), or switch the API off with poison-guard.ops-api.enabled=false",
                    Set.of(KEY_LOCATION, KEY_TEXT, "poison-guard.ops-api.enabled"));
        }
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> closed(ContainerRequestContext request) {
        if (!enabled && isOps(request.getUriInfo().getPath())) {
            return Optional.of(Response.status(404).build());
        }
        return Optional.empty();
    }

    @ServerResponseFilter
    public void noStore(ContainerRequestContext request, ContainerResponseContext response) {
        if (isOps(request.getUriInfo().getPath())) {
            response.getHeaders().putSingle(HttpHeaders.CACHE_CONTROL, "no-store");
            // The server's clock, which HTTP asks an origin server to send and the server does not by itself: the console
            // tells how long ago something happened by it, not by the clock of the machine it runs on.
            if (!response.getHeaders().containsKey(HttpHeaders.DATE)) {
                response.getHeaders().putSingle(HttpHeaders.DATE, HTTP_DATE.format(java.time.Instant.now()));
            }
        }
    }

    private static boolean isOps(String path) {
        return path.equals("/ops") || path.startsWith("/ops/");
    }
}

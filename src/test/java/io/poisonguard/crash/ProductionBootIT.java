package io.poisonguard.crash;

import io.poisonguard.config.Names;
import io.poisonguard.testing.Emulators;
import io.poisonguard.testing.ServiceProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, items 5 and 9, on the packaged service in the production profile (real processes): with the
 * operator API on and no token verification key it refuses to boot and names the keys; with a key it boots,
 * answers /ops without a token with 401 and no-store, and serves health and metrics only on the management
 * port; with the API switched off, /ops is 404.
 */
class ProductionBootIT {
    private final List<ServiceProcess> started = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stop() throws InterruptedException {
        for (ServiceProcess p : started) {
            p.stop();
        }
    }

    private ServiceProcess service(Map<String, String> overrides) throws Exception {
        Map<String, String> o = new HashMap<>(ServiceProcess.fastCrashSettings(new Names("boot" + UUID.randomUUID().toString().substring(0, 6)).prefix(), 1));
        o.putAll(overrides);
        ServiceProcess p = new ServiceProcess(o.get("poison-guard.prefix"), Emulators.shared(), o, Files.createDirectories(Path.of("target", "crash-logs")));
        started.add(p);
        p.start();
        return p;
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void withTheApiOnAndNoKeyTheServiceRefusesToBootNamingTheKeys() throws Exception {
        ServiceProcess p = service(Map.of("poison-guard.ops-api.enabled", "true"));
        await().atMost(Duration.ofSeconds(60)).until(() -> !p.alive());
        assertNotEquals(0, p.exitCode(), "a failed boot exits non-zero");
        String log = Files.readString(p.log(), StandardCharsets.ISO_8859_1);
        assertTrue(log.contains("mp.jwt.verify.publickey.location") && log.contains("poison-guard.ops-api.enabled=false"), log);
    }

    @Test
    void aMisspeltBreakerToPauseOnRefusesTheBootNamingTheKey() throws Exception {
        // Accepted, every consumption check would throw on the unknown breaker: a worker up and healthy that never receives.
        ServiceProcess p = service(Map.of("poison-guard.ops-api.enabled", "false", "poison-guard.consumer.pause-on-breakers", "permit-record"));
        await().atMost(Duration.ofSeconds(60)).until(() -> !p.alive());
        assertNotEquals(0, p.exitCode(), "a failed boot exits non-zero");
        String log = Files.readString(p.log(), StandardCharsets.ISO_8859_1);
        assertTrue(log.contains("poison-guard.consumer.pause-on-breakers") && log.contains("'permit-record'"), log);
    }

    @Test
    void withAKeyTheApiRefusesAnonymousCallsAndHealthIsOnlyOnTheManagementPort() throws Exception {
        Path keys = Files.createTempDirectory("pg-keys");
        Process mint = new ProcessBuilder("node", "scripts/dev-token.mjs", "--keys", keys.toString(), "viewer").redirectErrorStream(true).start();
        assertEquals(0, mint.waitFor(), new String(mint.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        ServiceProcess p = service(Map.of("poison-guard.ops-api.enabled", "true",
                "mp.jwt.verify.publickey.location", keys.resolve("public.pem").toString()));
        await().atMost(Duration.ofSeconds(60)).until(() -> p.ready() || !p.alive());
        assertTrue(p.alive(), "booted with a key");
        int api = p.httpPort();
        int management = p.managementPort();
        assertNotEquals(api, management);
        HttpResponse<String> anonymous = get(api, "/ops/quarantine");
        assertEquals(401, anonymous.statusCode());
        for (String path : List.of("/q/health/ready", "/q/metrics", "/q/openapi")) {
            assertEquals(404, get(api, path).statusCode(), path + " is not served on the API port");
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> get(management, "/q/health/ready").statusCode() == 200);
        assertTrue(get(management, "/q/metrics").body().contains("poison_guard_"), "metrics on the management port");
    }

    @Test
    void withTheApiOffOpsIsNotFound() throws Exception {
        ServiceProcess p = service(Map.of());
        await().atMost(Duration.ofSeconds(60)).until(() -> p.ready() || !p.alive());
        assertTrue(p.alive(), "booted without a key, the API being off");
        assertEquals(404, get(p.httpPort(), "/ops/quarantine").statusCode());
        assertEquals(404, get(p.httpPort(), "/ops/tenants/t-1").statusCode());
    }
}

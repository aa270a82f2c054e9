package io.poisonguard.testing;

import com.sun.net.httpserver.HttpServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Local HTTP sinks standing in for a webhook receiver and for SNS: they record what the service
 * delivers, so tests can check that an alert arrived, once, naming the job.
 */
public class AlertSinks implements QuarkusTestResourceLifecycleManager {
    public static final List<String> WEBHOOK = new CopyOnWriteArrayList<>();
    /** The Message parameter of each SNS Publish call. */
    public static final List<String> SNS = new CopyOnWriteArrayList<>();
    private HttpServer server;

    @Override
    public Map<String, String> start() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/hook", ex -> {
            WEBHOOK.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        // The SDK posts to the endpoint's root, so SNS gets every path but the webhook's.
        server.createContext("/", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String target = ex.getRequestHeaders().getFirst("X-Amz-Target");
            byte[] reply;
            if (target != null) {
                // JSON protocol
                SNS.add(body);
                reply = ("{\"MessageId\":\"" + UUID.randomUUID() + "\"}").getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
            } else {
                Map<String, String> form = new HashMap<>();
                for (String pair : body.split("&")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        form.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                    }
                }
                SNS.add(form.getOrDefault("Message", body));
                reply = ("<PublishResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><PublishResult><MessageId>" + UUID.randomUUID()
                        + "</MessageId></PublishResult><ResponseMetadata><RequestId>" + UUID.randomUUID()
                        + "</RequestId></ResponseMetadata></PublishResponse>").getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().add("Content-Type", "text/xml");
            }
            ex.sendResponseHeaders(200, reply.length);
            ex.getResponseBody().write(reply);
            ex.close();
        });
        server.start();
        // The SNS notifier uses the default credential chain, as in production; give it static ones.
        System.setProperty("aws.accessKeyId", "local");
        System.setProperty("aws.secretAccessKey", "local");
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        return Map.of(
                "poison-guard.alerts.webhook.url", base + "/hook",
                "poison-guard.alerts.sns.topic-arn", "arn:aws:sns:us-east-1:000000000000:poison-guard-alerts",
                "poison-guard.alerts.sns.region", "us-east-1",
                "poison-guard.alerts.sns.endpoint-override", base,
                "poison-guard.alerts.operator-url", "https://ops.example.test");
    }

    @Override
    public void stop() {
        if (server != null) {
            server.stop(0);
        }
    }
}

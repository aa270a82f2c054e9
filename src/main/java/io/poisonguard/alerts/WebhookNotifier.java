package io.poisonguard.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** POSTs each alert as JSON to a webhook (Slack/Teams relays, PagerDuty events, a custom receiver). */
final class WebhookNotifier implements Notifier {
    private final HttpClient http;
    private final URI url;
    private final Duration timeout;
    private final ObjectMapper json;

    WebhookNotifier(URI url, Duration timeout, ObjectMapper json) {
        this.url = url;
        this.timeout = timeout;
        this.json = json;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    @Override
    public String name() {
        return "webhook";
    }

    @Override
    public void send(Alert alert) throws IOException, InterruptedException {
        HttpResponse<Void> r = http.send(HttpRequest.newBuilder(url).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(alert))).build(), HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() >= 300) {
            throw new IOException("webhook answered " + r.statusCode());
        }
    }
}

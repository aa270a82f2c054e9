package io.poisonguard.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An SNS endpoint that accepts connections and never answers (a hung VPC endpoint, a black-holed route) fails an
 * alert's publish within the notifier's timeout. Before, the SNS client waited out the SDK's 30-second socket read on
 * each of its attempts, so the notifier's two senders took minutes per alert and a quarantine storm's alerts were
 * dropped behind them instead of being reported as failed.
 */
class SnsNotifierTest {
    private ServerSocket silent;
    private final List<Socket> held = new CopyOnWriteArrayList<>();

    @BeforeEach
    void silentEndpoint() throws IOException {
        silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!silent.isClosed()) {
                try {
                    held.add(silent.accept());
                } catch (IOException closed) {
                    return;
                }
            }
        });
        System.setProperty("aws.accessKeyId", "test");
        System.setProperty("aws.secretAccessKey", "test");
    }

    @AfterEach
    void close() throws IOException {
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
        silent.close();
        for (Socket s : held) {
            s.close();
        }
    }

    @Test
    void aTopicEndpointThatNeverAnswersFailsThePublishWithinTheTimeout() {
        URI endpoint = URI.create("http://127.0.0.1:" + silent.getLocalPort());
        try (SnsNotifier sns = new SnsNotifier("arn:aws:sns:us-east-1:000000000000:alerts", Optional.of("us-east-1"), Optional.of(endpoint),
                Duration.ofSeconds(1), new ObjectMapper().registerModule(new JavaTimeModule()))) {
            Alert alert = new Alert(Alert.QUARANTINED, "job-1", "tenant-a", "permit-report", "PERMANENT", 1, 1, "reason", "link", Instant.now());
            CompletableFuture<Void> publish = CompletableFuture.runAsync(() -> {
                try {
                    sns.send(alert);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // The SDK's own read timeout is 30 s an attempt; with a 1-second call timeout the publish gives up in about one.
            await().atMost(10, TimeUnit.SECONDS).until(publish::isDone);
            assertTrue(publish.isCompletedExceptionally(), "a publish nobody answered cannot have succeeded");
            assertTrue(!held.isEmpty(), "the client reached the silent endpoint");
        }
    }
}

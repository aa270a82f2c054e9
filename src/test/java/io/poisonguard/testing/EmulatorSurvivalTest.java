package io.poisonguard.testing;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The DynamoDB emulator outlives a client that gives up mid-request. Stock dynalite rethrows the
 * request's "aborted" error and its process exits: a client timeout during a chaos freeze then left every
 * later test without DynamoDB (the fresh-clone CI run where ChaosIT was followed only by failures).
 */
class EmulatorSurvivalTest {
    @Test
    void aRequestAbandonedHalfWayDoesNotStopDynalite() throws Exception {
        try (Emulators emulators = Emulators.dedicated()) {
            URI endpoint = URI.create(emulators.dynamoEndpoint());
            for (int i = 0; i < 3; i++) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", endpoint.getPort()), 2_000);
                    OutputStream out = s.getOutputStream();
                    out.write(("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\n"
                            + "X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 1000\r\n\r\n{\"Limit\":")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    s.setSoLinger(true, 0); // close with a reset, as a client timeout does
                }
            }
            try (DynamoDbClient dynamo = EmulatorClients.dynamo(emulators, java.time.Duration.ofSeconds(10))) {
                assertNotNull(dynamo.listTables().tableNames(), "dynalite still answers after three abandoned requests");
            }
            assertTrue(emulators.dynaliteAlive());
        }
    }
}

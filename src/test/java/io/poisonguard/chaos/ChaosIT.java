package io.poisonguard.chaos;

import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Chaos: service JVMs consuming a mixed workload while workers are SIGKILLed every few seconds, JVMs
 * kill themselves on crash jobs, and DynamoDB freezes once. Nothing may be lost, no job that should
 * complete may be quarantined, no poison job may complete, and every poison job must end quarantined.
 * Sized for CI by default; {@code scripts/chaos.sh} runs the long version through the same test with
 * {@code -Dchaos.*} properties (see {@link ChaosSettings}). The table and the verdict line are printed
 * and written to target/chaos/report.txt; worker logs are kept in target/chaos-logs.
 */
class ChaosIT {

    @Test
    void underKillsAndADynamoFreezeNothingIsLostNoInnocentIsQuarantinedAndNoPoisonCompletes() throws Exception {
        ChaosSettings settings = ChaosSettings.fromSystemProperties();
        Emulators emulators = Emulators.shared();
        ChaosReport report;
        try (SqsClient sqs = EmulatorClients.sqs(emulators); DynamoDbClient dynamo = EmulatorClients.dynamo(emulators)) {
            ChaosRun run = new ChaosRun(settings, emulators, sqs, dynamo, Path.of("target", "chaos-logs"));
            ChaosRun.Outcome outcome = run.run();
            report = ChaosReport.reconcile(outcome, sqs, dynamo);
        }
        String text = report.text();
        Path out = Files.createDirectories(Path.of("target", "chaos")).resolve("report.txt");
        Files.writeString(out, text, StandardCharsets.UTF_8);
        System.out.println("\n" + text);

        assertAll(
                () -> assertEquals(0, report.lost(), "lost jobs (see " + out + ")"),
                () -> assertEquals(0, report.unfinished(), "jobs still in progress when the bound ran out (see " + out + ")"),
                () -> assertEquals(0, report.innocentQuarantines(), "healthy, transient or throttled jobs quarantined (see " + out + ")"),
                () -> assertEquals(0, report.poisonCompleted(), "poison jobs that completed (see " + out + ")"),
                () -> assertEquals(0, report.poisonUnquarantined(), "poison jobs not quarantined (see " + out + ")"),
                () -> assertEquals(0, report.partialQuarantines(), "quarantines missing their record or DLQ copy (see " + out + ")"),
                () -> assertTrue(report.settled(), "every job reached a terminal outcome within the bound (see " + out + ")"),
                () -> assertTrue(report.pass(), report.verdict()));
    }
}

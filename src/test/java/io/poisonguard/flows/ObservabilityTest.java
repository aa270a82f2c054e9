package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The alert rules and the dashboard in infra/observability only name metrics the service exports,
 * and the quarantine gauges report what is waiting, by class.
 */
@QuarkusTest
@TestProfile(ObservabilityTest.Profile.class)
class ObservabilityTest extends FlowTest {
    static final Pattern METRIC = Pattern.compile("poison_guard_[a-z0-9_]+");

    public static class Profile extends EmulatorProfile {
        @Override
        public java.util.Map<String, String> getConfigOverrides() {
            // The drop counter exists (at zero) for each disposable type: name one, so the rule's metric is exported.
            return java.util.Map.of("poison-guard.disposable-job-types", "scripted");
        }
    }


    @Test
    void everyMetricTheRulesAndDashboardNameIsExportedAndTheGaugesCountQuarantine() throws Exception {
        Queues queues = new Queues(sqs, names);
        queues.send(Queues.permitV3("P-O"), Queues.permitAttributes("obs-bad", "tenant-o", 42));
        queues.send(Queues.permitV3("P-O"), Queues.permitAttributes("obs-good", "tenant-o", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(key("obs-good")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false)
                && ledger.find(key("obs-bad")).map(r -> r.state() == JobState.QUARANTINED).orElse(false));

        await().atMost(Duration.ofSeconds(15)).until(() -> scrape().contains("poison_guard_quarantine_records{failure_class=\"ADMISSION\"} 1.0"));
        String metrics = scrape();
        assertTrue(metrics.contains("poison_guard_quarantine_records{failure_class=\"CRASH\"} 0.0"), "every class has a gauge");
        assertTrue(metrics.contains("poison_guard_quarantine_oldest_age_seconds{failure_class=\"ADMISSION\"}"));

        Set<String> referenced = new TreeSet<>();
        for (String file : new String[]{"infra/observability/prometheus-rules.yaml", "infra/observability/grafana-dashboard.json"}) {
            Matcher m = METRIC.matcher(Files.readString(Path.of(file)));
            while (m.find()) {
                referenced.add(m.group());
            }
        }
        assertTrue(referenced.size() >= 8, "the files reference the service's metrics: " + referenced);
        Set<String> missing = new TreeSet<>();
        for (String name : referenced) {
            if (!Pattern.compile("(?m)^" + name + "[{ ]").matcher(metrics).find()) {
                missing.add(name);
            }
        }
        assertEquals(Set.of(), missing, "metrics named in infra/observability but not exported");
        System.out.println("\n[observability] rules and dashboard reference " + referenced.size() + " metrics, all exported: " + referenced);
    }

    private static String scrape() {
        return management().get("/q/metrics").then().statusCode(200).extract().asString();
    }
}

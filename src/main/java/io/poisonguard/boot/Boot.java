package io.poisonguard.boot;

import io.poisonguard.vault.PayloadVault;
import io.poisonguard.config.Names;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.disposition.Policy;
import io.poisonguard.dynamodb.TableBootstrap;
import io.poisonguard.handler.JobHandlers;
import io.poisonguard.observability.QuarantineGauges;
import io.poisonguard.pipeline.ConsumptionGate;
import io.poisonguard.pipeline.DeadLetterIntake;
import io.poisonguard.pipeline.LedgerConnections;
import io.poisonguard.pipeline.Poller;
import io.poisonguard.sqs.QueueBootstrap;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Boot order: validate the configuration (building the policy proves every limit reachable), create
 * resources when asked to, then start polling. Shutdown stops polling before beans are destroyed.
 */
@ApplicationScoped
public class Boot {
    private static final Logger LOG = Logger.getLogger(Boot.class);

    void onStart(@Observes StartupEvent event, PoisonGuardConfig config, Policy policy, Names names, SqsClient sqs,
                 DynamoDbClient dynamo, Poller poller, QuarantineGauges gauges, JobHandlers handlers, DeadLetterIntake deadLetterIntake,
                 PayloadVault vault, ConsumptionGate gate, io.poisonguard.pipeline.FleetResume fleetResume) {
        LOG.infof("Policy: %s", policy.classes());
        handlers.checkSettings();
        Map<String, Set<String>> typesNamed = new LinkedHashMap<>();
        config.attempt().deadlines().keySet().forEach(t -> typesNamed.put("poison-guard.attempt.deadlines.\"" + t + "\"", Set.of(t)));
        config.disposableJobTypes().ifPresent(types -> typesNamed.put("poison-guard.disposable-job-types", types));
        JobHandlers.checkTypesNamed(handlers.types(), typesNamed);
        gate.checkSettings();
        LOG.infof("Payload vault: %s", vault.enabled() ? "on (" + names.payloadsTable() + ")" : "off: the dead-letter queue is the only payload copy");
        int pool = org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getOptionalValue(LedgerConnections.KEY, Integer.class).orElse(LedgerConnections.SDK_DEFAULT);
        LedgerConnections.PoolLine poolLine = LedgerConnections.describe(pool, config.consumer().concurrency(), config.consumer().prefetch());
        if (poolLine.warning()) {
            LOG.warn(poolLine.text());
        } else {
            LOG.info(poolLine.text());
        }
        if (config.resources().create()) {
            new TableBootstrap(dynamo, names).ensureTables();
            new QueueBootstrap(sqs, names).ensureQueues(config.resources().queueRetention(),
                    config.consumer().visibilityTimeout(), config.resources().redriveMaxReceiveCount());
        }
        gauges.start();
        deadLetterIntake.start();
        fleetResume.start();
        if (config.consumer().enabled()) {
            poller.start();
        }
    }

    void onStop(@Observes ShutdownEvent event, Poller poller, DeadLetterIntake deadLetterIntake,
                io.poisonguard.pipeline.FleetResume fleetResume) {
        deadLetterIntake.stop();
        fleetResume.stop();
        poller.stop();
    }
}

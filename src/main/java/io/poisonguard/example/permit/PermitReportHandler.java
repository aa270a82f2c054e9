package io.poisonguard.example.permit;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.handler.Job;
import io.poisonguard.handler.JobContext;
import io.poisonguard.handler.JobHandler;
import io.poisonguard.pipeline.NoticePublisher;
import jakarta.inject.Singleton;

import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The example workload: renders a permit report from a JSON job, asks the permit-records service
 * for the permit's standing, and publishes one completion notice per job id through the effect
 * ledger, once the handler has succeeded ({@code onceOnSuccess}: the send waits outside the handler's slot).
 */
@Singleton
@io.quarkus.arc.lookup.LookupIfProperty(name = "poison-guard.example.enabled", stringValue = "true")
public class PermitReportHandler implements JobHandler {
    public static final String JOB_TYPE = "permit-report";
    static final String NOTICE_EFFECT = "completion-notice";

    private final PermitReportWork work;
    private final PermitRecordsClient provider;
    private final NoticePublisher notices;
    private final AtomicBoolean legacyReader;
    private final ExampleConfig config;

    public PermitReportHandler(ObjectMapper json, ExampleConfig config, PermitRecordsClient provider, NoticePublisher notices) {
        this.config = config;
        this.legacyReader = new AtomicBoolean(config.legacyReader());
        this.work = new PermitReportWork(json, legacyReader::get);
        this.provider = provider;
        this.notices = notices;
    }

    /**
     * Switches the release-27 compatibility reader at run time, as shipping a new handler version
     * would (the replay drill: quarantine, ship the reader, replay).
     */
    public void legacyReader(boolean enabled) {
        legacyReader.set(enabled);
    }

    @Override
    public String jobType() {
        return JOB_TYPE;
    }

    @Override
    public Set<Integer> knownSchemaVersions() {
        return Set.of(1, 2, PermitReaders.CURRENT);
    }

    @Override
    public void checkSettings() {
        config.provider().faults().forEach(SimulatedRecordsProvider::validate);
        double rate = config.provider().rate();
        if (!(rate > 0 && rate <= 10_000)) {
            String key = "poison-guard.example.provider.rate";
            throw new io.quarkus.runtime.configuration.ConfigurationException(key + " must be above 0 and at most 10000 per second, was " + rate,
                    Set.of(key));
        }
    }

    @Override
    public void handle(Job job, JobContext context) throws Exception {
        String body = work.notice(job.jobId(), job.tenant(), job.schemaVersion(), job.body(), job.attempt(), job.generation(), provider::standing);
        context.onceOnSuccess(NOTICE_EFFECT, () -> notices.publish(job.jobId(), job.tenant(), job.jobType(), body));
    }
}

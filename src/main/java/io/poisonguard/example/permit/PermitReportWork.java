package io.poisonguard.example.permit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.BooleanSupplier;

/**
 * The example workload's own work on one permit-report job, without the service around it: read the body in
 * its schema version, ask permit-records for the permit's standing, render the report and compose the
 * completion notice. {@link PermitReportHandler} runs it inside poison-guard; the cost benchmark's baseline
 * consumers run the same code, so every consumer it compares does the same work per message.
 */
public final class PermitReportWork {
    /** How the work reaches permit-records: the handler goes through its guarded client, a baseline calls the provider. */
    @FunctionalInterface
    public interface Standing {
        String of(String tenant, String permitId) throws Exception;
    }

    private final ObjectMapper json;
    private final PermitReaders readers;

    public PermitReportWork(ObjectMapper json, BooleanSupplier legacyReader) {
        this.json = json;
        this.readers = new PermitReaders(json, legacyReader);
    }

    /** The notice body for one job; a body that cannot be read fails as the readers classify it. */
    public String notice(String jobId, String tenant, int schemaVersion, String body, int attempt, int generation, Standing standing)
            throws Exception {
        PermitReport report = readers.read(schemaVersion, body);
        String state = standing.of(tenant, report.permitId());
        String rendered = render(report, state);
        ObjectNode notice = json.createObjectNode();
        notice.put("jobId", jobId);
        notice.put("permitId", report.permitId());
        notice.put("standing", state);
        notice.put("inspections", report.inspections().size());
        notice.put("passed", report.inspections().stream().filter(i -> "PASS".equalsIgnoreCase(i.result())).count());
        notice.put("reportSha256", sha256(rendered));
        notice.put("attempt", attempt);
        notice.put("generation", generation);
        return notice.toString();
    }

    static String render(PermitReport r, String standing) {
        StringBuilder sb = new StringBuilder();
        sb.append("Permit ").append(r.permitId()).append(" (").append(standing).append(")\n");
        sb.append("Applicant: ").append(r.applicantName()).append('\n');
        sb.append("Site: ").append(r.siteAddress()).append('\n');
        for (PermitReport.Inspection i : r.inspections()) {
            sb.append("  ").append(i.date()).append("  ").append(i.result()).append('\n');
        }
        return sb.toString();
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

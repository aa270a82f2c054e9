package io.poisonguard.example.permit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.failure.JobFailure;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PermitReportWorkTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aCurrentReportBecomesANoticeWithTheRenderedReportsDigest() throws Exception {
        List<String> asked = new ArrayList<>();
        PermitReportWork work = new PermitReportWork(JSON, () -> false);
        String body = "{\"permitId\":\"P-7\",\"applicant\":{\"name\":\"Ada Builder\",\"address\":\"1 Main St\"},"
                + "\"inspections\":[{\"date\":\"2026-10-01\",\"result\":\"PASS\"},{\"date\":\"2026-10-20\",\"result\":\"FAIL\"}]}";

        JsonNode notice = JSON.readTree(work.notice("job-1", "acme", 3, body, 2, 5, (tenant, permit) -> {
            asked.add(tenant + ":" + permit);
            return "ISSUED";
        }));

        assertEquals(List.of("acme:P-7"), asked);
        assertEquals("job-1", notice.get("jobId").asText());
        assertEquals("P-7", notice.get("permitId").asText());
        assertEquals("ISSUED", notice.get("standing").asText());
        assertEquals(2, notice.get("inspections").asInt());
        assertEquals(1, notice.get("passed").asInt());
        assertEquals(2, notice.get("attempt").asInt());
        assertEquals(5, notice.get("generation").asInt());
        String rendered = "Permit P-7 (ISSUED)\nApplicant: Ada Builder\nSite: 1 Main St\n  2026-10-01  PASS\n  2026-10-20  FAIL\n";
        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(rendered.getBytes(StandardCharsets.UTF_8)));
        assertEquals(digest, notice.get("reportSha256").asText());
    }

    @Test
    void releaseTwentySevensShapeIsPermanentUntilTheCompatibilityReaderIsOn() throws Exception {
        String v1 = "{\"id\":\"P-9\",\"owner\":\"Bo\",\"site\":\"2 Side Rd\",\"checks\":\"2026-09-01:PASS\"}";
        PermitReportWork.Standing standing = (tenant, permit) -> "EXPIRED";

        JobFailure refused = assertThrows(JobFailure.class,
                () -> new PermitReportWork(JSON, () -> false).notice("job-2", "acme", 1, v1, 1, 1, standing));
        assertEquals(FailureClass.PERMANENT, refused.failureClass());

        JsonNode notice = JSON.readTree(new PermitReportWork(JSON, () -> true).notice("job-2", "acme", 1, v1, 1, 1, standing));
        assertEquals("P-9", notice.get("permitId").asText());
        assertEquals(1, notice.get("passed").asInt());
    }

    @Test
    void aFailingDependencyFailsTheWorkAsItFailed() {
        String body = "{\"permit_id\":\"P-3\",\"applicant_name\":\"Cy\",\"site_address\":\"3 Hill\",\"inspections\":[]}";
        JobFailure down = assertThrows(JobFailure.class, () -> new PermitReportWork(JSON, () -> false).notice("job-3", "acme", 2, body, 1, 1,
                (tenant, permit) -> {
                    throw JobFailure.dependencyDown("permit-records is unavailable");
                }));
        assertEquals(FailureClass.DEPENDENCY_DOWN, down.failureClass());
    }
}

package io.poisonguard.example.permit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.poisonguard.failure.JobFailure;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads the three shapes a permit report job has had (README, "Example workload"):
 * v3 (current) and v2 (previous) always; v1 (release 27) only when the compatibility reader is on.
 */
final class PermitReaders {
    static final int CURRENT = 3;

    private final ObjectMapper json;
    private final java.util.function.BooleanSupplier legacyReader;

    PermitReaders(ObjectMapper json, java.util.function.BooleanSupplier legacyReader) {
        this.json = json;
        this.legacyReader = legacyReader;
    }

    PermitReport read(int schemaVersion, String body) throws java.io.IOException {
        JsonNode root = json.readTree(body);
        if (root == null || !root.isObject()) {
            throw JobFailure.permanent("body is not a JSON object");
        }
        return switch (schemaVersion) {
            case 3 -> v3(root);
            case 2 -> v2(root);
            case 1 -> {
                if (!legacyReader.getAsBoolean()) {
                    throw JobFailure.permanent("schema version 1 is no longer readable by this release;"
                            + " enable poison-guard.example.legacy-reader to read it");
                }
                yield v1(root);
            }
            default -> throw JobFailure.permanent("schema version " + schemaVersion + " is not supported");
        };
    }

    private static PermitReport v3(JsonNode n) {
        JsonNode applicant = required(n, "applicant");
        List<PermitReport.Inspection> inspections = new ArrayList<>();
        for (JsonNode i : n.path("inspections")) {
            inspections.add(new PermitReport.Inspection(text(i, "date"), text(i, "result")));
        }
        return new PermitReport(text(n, "permitId"), text(applicant, "name"), text(applicant, "address"), inspections);
    }

    private static PermitReport v2(JsonNode n) {
        List<PermitReport.Inspection> inspections = new ArrayList<>();
        for (JsonNode i : n.path("inspections")) {
            inspections.add(new PermitReport.Inspection(text(i, "date"), text(i, "outcome")));
        }
        return new PermitReport(text(n, "permit_id"), text(n, "applicant_name"), text(n, "site_address"), inspections);
    }

    /** Release 27: inspections were one "date:RESULT;date:RESULT" string. */
    private static PermitReport v1(JsonNode n) {
        List<PermitReport.Inspection> inspections = new ArrayList<>();
        String checks = n.path("checks").asText("");
        for (String part : checks.split(";")) {
            int colon = part.indexOf(':');
            if (colon > 0) {
                inspections.add(new PermitReport.Inspection(part.substring(0, colon).strip(), part.substring(colon + 1).strip()));
            }
        }
        return new PermitReport(text(n, "id"), text(n, "owner"), text(n, "site"), inspections);
    }

    private static JsonNode required(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull() || v.isMissingNode()) {
            throw JobFailure.permanent("required field '" + field + "' is missing");
        }
        return v;
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = required(n, field);
        if (!v.isTextual() || v.asText().isBlank()) {
            throw JobFailure.permanent("field '" + field + "' must be a non-empty string");
        }
        return v.asText();
    }
}

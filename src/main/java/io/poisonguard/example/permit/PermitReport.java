package io.poisonguard.example.permit;

import java.util.List;

/** A permit report request, whatever schema version it arrived in. */
public record PermitReport(String permitId, String applicantName, String siteAddress, List<Inspection> inspections) {
    public PermitReport {
        inspections = List.copyOf(inspections);
    }

    /** One inspection of the permit's site. */
    public record Inspection(String date, String result) {
    }
}

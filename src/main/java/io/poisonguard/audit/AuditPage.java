package io.poisonguard.audit;

import java.util.List;

/** One page of audit entries, newest first, and the cursor of the next page (null at the end). */
public record AuditPage(List<AuditEntry> items, String nextCursor) {
}

package io.poisonguard.quarantine;

import java.util.List;

/**
 * One page of quarantine records and the cursor of the next page, if any. A page may hold fewer records than
 * asked for, even none, while a cursor remains: one call reads a bounded number of records, so a narrow filter
 * over a large table answers in steps. The listing is complete when {@code nextCursor} is null.
 */
public record QuarantinePage(List<QuarantineRecord> items, String nextCursor) {
}

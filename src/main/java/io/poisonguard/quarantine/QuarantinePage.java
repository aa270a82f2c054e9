package io.poisonguard.quarantine;

import java.util.List;

/** One page of quarantine records and the cursor of the next page, if any. */
public record QuarantinePage(List<QuarantineRecord> items, String nextCursor) {
}

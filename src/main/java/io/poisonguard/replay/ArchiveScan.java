package io.poisonguard.replay;

import java.util.List;

/**
 * A look through the dead-letter queue for one job's copies.
 *
 * @param complete whether every message was looked at; a scan stopped at its bound found nothing
 *                 provable, so "no copy" from it is "not found yet", never a loss
 */
public record ArchiveScan(List<ArchivedMessage> copies, boolean complete) {
    public ArchiveScan {
        copies = List.copyOf(copies);
    }
}

package io.poisonguard.admission;

/**
 * What pre-flight learned about a message, kept in its quarantine record even when the worker later
 * dies (seed 000: record what you can before the risky step). Never the payload itself.
 */
public record Diagnostics(
        long sizeBytes,
        String charset,
        String transferEncoding,
        Integer tokenEstimate,
        Integer schemaVersion,
        Integer attachmentCount) {
}

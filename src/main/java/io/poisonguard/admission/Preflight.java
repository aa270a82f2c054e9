package io.poisonguard.admission;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Pre-flight admission (invariant 7): the cheapest possible rejection, before a worker is involved.
 * Checks run cheapest first, so an oversized body is refused before anything decodes it.
 */
public final class Preflight {
    private static final java.util.regex.Pattern WHITESPACE = java.util.regex.Pattern.compile("\\s+");

    private final AdmissionLimits limits;
    private final SchemaCatalog catalog;

    public Preflight(AdmissionLimits limits, SchemaCatalog catalog) {
        this.limits = limits;
        this.catalog = catalog;
    }

    public Verdict check(InboundMessage m) {
        String charsetName = m.attribute(WireAttributes.CHARSET).orElse("UTF-8");
        String transfer = m.attribute(WireAttributes.CONTENT_TRANSFER_ENCODING).map(s -> s.toLowerCase(Locale.ROOT)).orElse(null);
        Integer schema = parseInt(m.attribute(WireAttributes.SCHEMA_VERSION)).orElse(null);
        Integer attachments = parseInt(m.attribute(WireAttributes.ATTACHMENT_COUNT)).orElse(null);
        long wireBytes = utf8Length(m.body());
        // Diagnostics name the declared charset and encoding only when they look like names: a sender's text
        // (an address, a key) put there never reaches a record.
        Diagnostics early = new Diagnostics(wireBytes, nameOrUnrecognised(charsetName), transfer == null ? null : nameOrUnrecognised(transfer),
                null, schema, attachments);

        Optional<String> jobIdAttribute = m.attribute(WireAttributes.JOB_ID);
        if (jobIdAttribute.isPresent() && !JobIdentity.usable(jobIdAttribute.get())) {
            // The job is then known by its MessageId; the value is not quoted.
            return reject("invalid-job-id", "the job-id attribute must be 1 to " + JobIdentity.MAX_JOB_ID_LENGTH
                    + " characters without control characters", early);
        }
        Optional<String> jobType = m.attribute(WireAttributes.JOB_TYPE);
        if (jobType.isEmpty()) {
            return reject("missing-job-type", "the job-type attribute is required", early);
        }
        Optional<Set<Integer>> known = catalog.knownVersions(jobType.get());
        if (known.isEmpty()) {
            return reject("unknown-job-type", "no handler takes the job type this message names", early);
        }
        Optional<String> tenant = m.attribute(WireAttributes.TENANT);
        if (tenant.isEmpty()) {
            return reject("missing-tenant", "the tenant attribute is required", early);
        }
        if (!io.poisonguard.ledger.JobKey.validTenant(tenant.get())) {
            // The value is not quoted: it may be anything a sender put there.
            return reject("invalid-tenant", "the tenant attribute must be " + io.poisonguard.ledger.JobKey.TENANT_RULE, early);
        }
        if (m.attribute(WireAttributes.SCHEMA_VERSION).isEmpty()) {
            return reject("missing-schema-version", "the schema-version attribute is required", early);
        }
        if (schema == null) {
            return reject("invalid-schema-version", "schema-version is not a whole number", early);
        }
        if (m.attribute(WireAttributes.ATTACHMENT_COUNT).isPresent() && attachments == null) {
            return reject("invalid-attachment-count", "attachment-count is not a whole number", early);
        }
        if (wireBytes > limits.maxBodyBytes() * 4L / 3 + 4) {
            // Even base64 cannot shrink it under the limit: refuse before decoding anything.
            return reject("body-too-large", "body is " + wireBytes + " bytes, the limit is " + limits.maxBodyBytes(), early);
        }

        long sqsBytes = WireSize.ofCopied(m);
        if (sqsBytes + WireSize.DEAD_LETTER_ADDITIONS > WireSize.SQS_MAX_MESSAGE_BYTES) {
            // Every admitted message's dead-letter copy must fit SQS whole; one that cannot is refused now, by name.
            return reject("too-large-for-dead-letter", "message is " + sqsBytes + " bytes as SQS counts it (less any job-id); with the "
                    + WireSize.DEAD_LETTER_ADDITIONS + " bytes a dead-letter copy may add it would pass SQS's limit of "
                    + WireSize.SQS_MAX_MESSAGE_BYTES, early);
        }

        Charset charset;
        try {
            charset = Charset.forName(charsetName);
        } catch (IllegalCharsetNameException | UnsupportedCharsetException e) {
            return reject("unsupported-charset", "the declared charset is not one this service decodes", early);
        }

        byte[] bytes;
        if (transfer == null) {
            bytes = null;
        } else if (transfer.equals("base64")) {
            try {
                // Strict alphabet: the MIME decoder would skip stray characters and admit garbage.
                bytes = Base64.getDecoder().decode(WHITESPACE.matcher(m.body()).replaceAll(""));
            } catch (IllegalArgumentException e) {
                return reject("invalid-base64", "body is declared base64 but does not decode", early);
            }
        } else {
            return reject("unsupported-transfer-encoding", "the declared content-transfer-encoding is not supported (only base64)", early);
        }
        long size = bytes == null ? wireBytes : bytes.length;
        Diagnostics sized = new Diagnostics(size, charsetName, transfer, null, schema, attachments);
        if (size > limits.maxBodyBytes()) {
            return reject("body-too-large", "body is " + size + " bytes, the limit is " + limits.maxBodyBytes(), sized);
        }

        String text;
        if (bytes == null) {
            // SQS carries the body as Unicode text; the declared charset only matters for bytes.
            if (hasLoneSurrogate(m.body())) {
                return reject("undecodable-body", "body contains unpaired UTF-16 surrogates", sized);
            }
            text = m.body();
        } else {
            try {
                text = charset.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes))
                        .toString();
            } catch (CharacterCodingException e) {
                return reject("undecodable-body", "body is not valid " + charset.name(), sized);
            }
        }

        int tokens = (int) Math.min(Integer.MAX_VALUE, (text.length() + limits.charsPerToken() - 1L) / limits.charsPerToken());
        Diagnostics full = new Diagnostics(size, charsetName, transfer, tokens, schema, attachments);
        if (tokens > limits.maxTokens()) {
            return reject("too-many-tokens", "estimated " + tokens + " tokens, the limit is " + limits.maxTokens(), full);
        }
        if (attachments != null && (attachments < 0 || attachments > limits.maxAttachments())) {
            return reject("too-many-attachments", attachments + " attachments, the limit is " + limits.maxAttachments(), full);
        }
        if (!known.get().contains(schema)) {
            return reject("unknown-schema-version", "job type '" + jobType.get() + "' has no schema version " + schema
                    + " (known: " + known.get().stream().sorted().toList() + ")", full);
        }
        return new Verdict.Admitted(tenant.get(), jobType.get(), schema, text, full);
    }

    private static Verdict reject(String reason, String detail, Diagnostics d) {
        return new Verdict.Rejected(reason, detail, d);
    }

    private static Optional<Integer> parseInt(Optional<String> s) {
        try {
            return s.map(v -> Integer.valueOf(v.strip()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The UTF-8 byte length of {@code s}, counted without encoding it. */
    public static long utf8Length(CharSequence s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static boolean hasLoneSurrogate(String s) {
        CharBuffer in = CharBuffer.wrap(s);
        try {
            StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT).encode(in);
            return false;
        } catch (CharacterCodingException e) {
            return true;
        }
    }

    private static final java.util.regex.Pattern JOB_TYPE_SHAPE = java.util.regex.Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");

    /**
     * The job type a copy names, as records and alerts may show it: the value when it has the shape of a job
     * type name, otherwise null (a sender's text in the attribute reaches no record).
     */
    public static String recordableJobType(java.util.Optional<String> declared) {
        // Name-shaped is not enough: a provider key (sk_live_...) or a key id is name-shaped too. A value the
        // scrubber would mask is not recorded.
        return declared.filter(t -> JOB_TYPE_SHAPE.matcher(t).matches() && io.poisonguard.failure.Scrubber.scrub(t, 200).equals(t))
                .orElse(null);
    }

    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z][A-Za-z0-9._:+-]{0,39}");

    /** Names every message declares (UTF-8, base64...): checked once, not per message. */
    private static final java.util.Set<String> COMMON_NAMES = java.util.Set.of("UTF-8", "utf-8", "base64", "gzip", "identity");

    /** A charset or encoding name as declared, when it has the shape of one; otherwise a fixed word. */
    static String nameOrUnrecognised(String declared) {
        if (COMMON_NAMES.contains(declared)) {
            return declared;
        }
        return NAME.matcher(declared).matches() && io.poisonguard.failure.Scrubber.scrub(declared, 200).equals(declared) ? declared : "unrecognised";
    }
}

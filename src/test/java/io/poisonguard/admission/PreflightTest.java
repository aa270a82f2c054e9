package io.poisonguard.admission;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;

import static io.poisonguard.admission.Messages.job;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PreflightTest {
    private static final int MAX_BODY_BYTES = 1024;
    private static final SchemaCatalog CATALOG =
            jobType -> "permit-report".equals(jobType) ? Optional.of(Set.of(1, 2, 3)) : Optional.empty();

    private final Preflight preflight = new Preflight(new AdmissionLimits(MAX_BODY_BYTES, 200, 4, 3), CATALOG);

    private Verdict.Admitted admitted(Messages m) {
        Verdict v = preflight.check(m.build());
        return assertInstanceOf(Verdict.Admitted.class, v, () -> "expected admission, got " + v);
    }

    private Verdict.Rejected rejected(Messages m, String reason) {
        Verdict v = preflight.check(m.build());
        Verdict.Rejected r = assertInstanceOf(Verdict.Rejected.class, v, () -> "expected " + reason + ", got " + v);
        assertEquals(reason, r.reason(), r.describe());
        return r;
    }

    private static String base64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    @Test
    void aValidUtf8JsonBodyIsAdmittedWithItsDiagnostics() {
        String body = "{\"permitId\":\"P-1\",\"note\":\"café ✓\"}";

        Verdict.Admitted a = admitted(job().body(body));

        assertEquals("acme", a.tenant());
        assertEquals("permit-report", a.jobType());
        assertEquals(2, a.schemaVersion());
        assertEquals(body, a.text());
        Diagnostics d = a.diagnostics();
        assertEquals(body.getBytes(StandardCharsets.UTF_8).length, d.sizeBytes());
        assertEquals("UTF-8", d.charset());
        assertNull(d.transferEncoding());
        assertEquals((body.length() + 3) / 4, d.tokenEstimate());
        assertEquals(2, d.schemaVersion());
        assertNull(d.attachmentCount());
    }

    @Test
    void theJobTypeIsRequired() {
        rejected(job().without(WireAttributes.JOB_TYPE), "missing-job-type");
        rejected(job().with(WireAttributes.JOB_TYPE, "  "), "missing-job-type");
    }

    @Test
    void aJobTypeWithoutAHandlerIsRejected() {
        Verdict.Rejected r = rejected(job().with(WireAttributes.JOB_TYPE, "invoice"), "unknown-job-type");

        // Issue 12: the detail names the problem, never the sender's value.
        assertFalse(r.detail().contains("invoice"), r.detail());
    }

    @Test
    void theTenantIsRequired() {
        rejected(job().without(WireAttributes.TENANT), "missing-tenant");
    }

    @Test
    void theSchemaVersionIsRequired() {
        rejected(job().without(WireAttributes.SCHEMA_VERSION), "missing-schema-version");
    }

    @ParameterizedTest
    @ValueSource(strings = {"two", "2.5", "99999999999"})
    void aSchemaVersionThatIsNotAWholeNumberIsRejected(String version) {
        rejected(job().with(WireAttributes.SCHEMA_VERSION, version), "invalid-schema-version");
    }

    @Test
    void aSchemaVersionTheJobTypeDoesNotKnowIsRejectedNamingTheKnownOnes() {
        Verdict.Rejected r = rejected(job().with(WireAttributes.SCHEMA_VERSION, MessageAttribute.number(7)), "unknown-schema-version");

        assertTrue(r.detail().contains("[1, 2, 3]"), r.detail());
        assertEquals(7, r.diagnostics().schemaVersion());
    }

    @Test
    void aHugeBodyIsRejectedBeforeAnythingDecodesIt() {
        // Declared base64 in an unknown charset: decoding would end in another reason (and cost a
        // decode of megabytes); the size check must come first.
        String huge = "@".repeat(4 * 1024 * 1024);

        Verdict.Rejected r = rejected(job().body(huge)
                .with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64")
                .with(WireAttributes.CHARSET, "x-no-such-charset"), "body-too-large");

        assertEquals(huge.length(), r.diagnostics().sizeBytes());
        assertNull(r.diagnostics().tokenEstimate(), "nothing was decoded, so nothing was estimated");
    }

    @Test
    void aBodyIsMeasuredInUtf8BytesNotCharacters() {
        // 512 two-byte characters are exactly 1024 bytes.
        String atLimit = "é".repeat(512);

        assertEquals(1024, admitted(job().body(atLimit)).diagnostics().sizeBytes());
        Verdict.Rejected r = rejected(job().body(atLimit + "a"), "body-too-large");
        assertEquals(1025, r.diagnostics().sizeBytes());
    }

    @Test
    void aBase64BodyIsMeasuredAfterDecoding() {
        byte[] justOver = new byte[MAX_BODY_BYTES + 1];
        java.util.Arrays.fill(justOver, (byte) 'a');

        Verdict.Rejected r = rejected(job().body(base64(justOver)).with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64"),
                "body-too-large");

        assertEquals(MAX_BODY_BYTES + 1, r.diagnostics().sizeBytes());
    }

    @Test
    void aBase64BodyWithATruncatedLastUnitIsRejected() {
        rejected(job().body("eyJhIjoxfQ=A").with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64"), "invalid-base64");
        rejected(job().body("QUJDR").with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64"), "invalid-base64");
    }

    @Test
    void aPlainJsonBodyDeclaredBase64IsRejectedAsInvalidBase64() {
        // Not base64 at all: it must not be "decoded" into a few bytes of garbage and admitted.
        rejected(job().body("{\"a\":1}").with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64"), "invalid-base64");
    }

    @Test
    void base64BytesThatAreNotValidInTheDeclaredCharsetAreUndecodable() {
        Verdict.Rejected r = rejected(job()
                .body(base64(new byte[] {(byte) 0xC3, (byte) 0x28}))
                .with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64")
                .with(WireAttributes.CHARSET, "UTF-8"), "undecodable-body");

        assertEquals(2, r.diagnostics().sizeBytes());
        assertEquals("UTF-8", r.diagnostics().charset());
    }

    @Test
    void aTextBodyWithAnUnpairedSurrogateIsUndecodable() {
        rejected(job().body("{\"note\":\"\uD800\"}"), "undecodable-body");
    }

    @ParameterizedTest
    @ValueSource(strings = {"x-no-such-charset", "utf 8!"})
    void anUnknownOrMalformedCharsetIsUnsupported(String charset) {
        Verdict.Rejected r = rejected(job()
                .body(base64("hello".getBytes(StandardCharsets.US_ASCII)))
                .with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64")
                .with(WireAttributes.CHARSET, charset), "unsupported-charset");

        // A name-shaped charset is kept for the diagnostics; anything else a sender put there is not.
        assertEquals(charset.equals("utf 8!") ? "unrecognised" : charset, r.diagnostics().charset());
    }

    @Test
    void aTransferEncodingOtherThanBase64IsUnsupported() {
        rejected(job().with(WireAttributes.CONTENT_TRANSFER_ENCODING, "quoted-printable"), "unsupported-transfer-encoding");
    }

    @Test
    void theTransferEncodingIsCaseInsensitive() {
        Verdict.Admitted a = admitted(job()
                .body(base64("{\"permitId\":\"P-1\"}".getBytes(StandardCharsets.UTF_8)))
                .with(WireAttributes.CONTENT_TRANSFER_ENCODING, "BASE64"));

        assertEquals("{\"permitId\":\"P-1\"}", a.text());
    }

    @Test
    void aBodyOverTheTokenEstimateIsRejected() {
        // 900 characters at 4 per token is 225 tokens; the limit is 200.
        Verdict.Rejected r = rejected(job().body("x".repeat(900)), "too-many-tokens");

        assertEquals(225, r.diagnostics().tokenEstimate());
        assertEquals(900, r.diagnostics().sizeBytes());
    }

    @Test
    void aBodyAtTheTokenLimitIsAdmitted() {
        assertEquals(200, admitted(job().body("x".repeat(800))).diagnostics().tokenEstimate());
    }

    @ParameterizedTest
    @ValueSource(longs = {4, 1_000, -1})
    void anAttachmentCountAboveTheLimitOrNegativeIsRejected(long count) {
        Verdict.Rejected r = rejected(job().with(WireAttributes.ATTACHMENT_COUNT, MessageAttribute.number(count)), "too-many-attachments");

        assertEquals((int) count, r.diagnostics().attachmentCount());
    }

    @Test
    void anAttachmentCountAtTheLimitIsAdmitted() {
        assertEquals(3, admitted(job().with(WireAttributes.ATTACHMENT_COUNT, MessageAttribute.number(3))).diagnostics().attachmentCount());
    }

    @Test
    void anAttachmentCountThatIsNotANumberIsRejected() {
        rejected(job().with(WireAttributes.ATTACHMENT_COUNT, "several"), "invalid-attachment-count");
    }

    @Test
    void windows1252BytesInBase64DecodeToTheRightText() {
        String text = "{\"note\":\"Grüße – €5 café\"}";
        byte[] bytes = text.getBytes(Charset.forName("windows-1252"));

        Verdict.Admitted a = admitted(job()
                .body(base64(bytes))
                .with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64")
                .with(WireAttributes.CHARSET, "windows-1252"));

        assertEquals(text, a.text());
        Diagnostics d = a.diagnostics();
        assertEquals(bytes.length, d.sizeBytes());
        assertEquals("windows-1252", d.charset());
        assertEquals("base64", d.transferEncoding());
        assertEquals((text.length() + 3) / 4, d.tokenEstimate());
    }

    @Test
    void mimeWrappedBase64IsAccepted() {
        String text = "{\"permitId\":\"P-1\",\"site\":\"North Yard, gate 4\"}";
        String wrapped = Base64.getMimeEncoder(16, "\r\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(text.getBytes(StandardCharsets.UTF_8));

        assertEquals(text, admitted(job().body(wrapped).with(WireAttributes.CONTENT_TRANSFER_ENCODING, "base64")).text());
    }

    @Test
    void rejectionsCarryWhateverDiagnosticsWereLearnedSoFar() {
        Verdict.Rejected r = rejected(job()
                .with(WireAttributes.SCHEMA_VERSION, MessageAttribute.number(9))
                .with(WireAttributes.CHARSET, "ISO-8859-1")
                .with(WireAttributes.ATTACHMENT_COUNT, MessageAttribute.number(2))
                .body("{\"permitId\":\"P-7\"}"), "unknown-schema-version");

        Diagnostics d = r.diagnostics();
        assertEquals(18, d.sizeBytes());
        assertEquals("ISO-8859-1", d.charset());
        assertEquals(5, d.tokenEstimate());
        assertEquals(9, d.schemaVersion());
        assertEquals(2, d.attachmentCount());
    }

    @Test
    void aLongControlLadenJobTypeNeverReachesTheDetail() {
        Verdict.Rejected r = rejected(job().with(WireAttributes.JOB_TYPE, "evil\u0007type" + "x".repeat(100)), "unknown-job-type");

        assertFalse(r.detail().contains("evil") || r.detail().contains("\u0007") || r.detail().contains("xxxx"), r.detail());
        assertTrue(r.detail().length() < 120, r.detail());
    }

    /** Limits that let a body reach SQS's own limit, so only the wire-size accounting can refuse it. */
    private final Preflight wide = new Preflight(new AdmissionLimits(1024 * 1024, Integer.MAX_VALUE, 4, 3), CATALOG);

    private static Messages sizedTo(long wireBytes) {
        Messages m = job().body("");
        long overhead = WireSize.of(m.build());
        return m.body("x".repeat((int) (wireBytes - overhead)));
    }

    @Test
    void aMessageThatLeavesNoRoomForTheDeadLetterAdditionsIsRejectedNamingTheReason() {
        long limit = WireSize.SQS_MAX_MESSAGE_BYTES - WireSize.DEAD_LETTER_ADDITIONS;
        Messages atTheLimit = sizedTo(limit + 1);
        assertEquals(limit + 1, WireSize.of(atTheLimit.build()));

        Verdict v = wide.check(atTheLimit.build());

        Verdict.Rejected r = assertInstanceOf(Verdict.Rejected.class, v);
        assertEquals("too-large-for-dead-letter", r.reason());
        assertTrue(r.detail().contains(Long.toString(limit + 1)), r.detail());
    }

    @Test
    void aMessageJustBelowTheLimitIsAdmittedAndItsAttributesCountAgainstIt() {
        long limit = WireSize.SQS_MAX_MESSAGE_BYTES - WireSize.DEAD_LETTER_ADDITIONS;

        assertInstanceOf(Verdict.Admitted.class, wide.check(sizedTo(limit).build()));
        // The same body with one more attribute crosses it: attributes are part of the size.
        Messages withTrace = sizedTo(limit).with("a", MessageAttribute.string(""));
        assertEquals("too-large-for-dead-letter", assertInstanceOf(Verdict.Rejected.class, wide.check(withTrace.build())).reason());
    }

    /**
     * A copy the redrive backstop moved to the dead-letter queue goes back to the main queue with its job id and the count
     * of its returns added (DeadLetterIntake.giveBack). Neither grows what its dead-letter copy would be (that copy
     * carries a job id of its own, counted in the additions, and not the count), so a message admitted before is
     * admitted again. Before, one within those bytes of the limit was refused as too large for a dead-letter copy: a
     * healthy job quarantined for having been given back.
     */
    @Test
    void aCopyGivenBackFromTheDeadLetterQueueIsAdmittedAsItWasBefore() {
        long limit = WireSize.SQS_MAX_MESSAGE_BYTES - WireSize.DEAD_LETTER_ADDITIONS;
        assertInstanceOf(Verdict.Admitted.class, wide.check(sizedTo(limit).build()));

        Messages givenBack = sizedTo(limit).with(WireAttributes.JOB_ID, "0f8e3c2a-1b7d-4c55-9e21-6a4f0d9b8c71")
                .with(WireAttributes.DEAD_LETTER_RETURNS, "1/7");
        assertInstanceOf(Verdict.Admitted.class, wide.check(givenBack.build()));
    }

    @Test
    void wireSizeCountsTheBodyAndEachAttributesNameTypeAndValueInUtf8() {
        java.util.Map<String, MessageAttribute> attrs = java.util.Map.of(
                "tenant", MessageAttribute.string("é"),
                "blob", new MessageAttribute("Binary", null, new byte[]{1, 2, 3}),
                "schema-version", MessageAttribute.number(12));

        long size = WireSize.of("€", attrs);

        assertEquals(3 + (6 + 6 + 2) + (4 + 6 + 3) + (14 + 6 + 2), size);
    }
}

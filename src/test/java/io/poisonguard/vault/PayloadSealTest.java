package io.poisonguard.vault;

import io.poisonguard.admission.MessageAttribute;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PayloadSealTest {
    private static final byte[] KEY = key(1);
    private static final byte[] OLD = key(2);

    private static byte[] key(int fill) {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) fill);
        return k;
    }

    @Property(tries = 200)
    void whatIsSealedOpensToTheSameBodyAndAttributes(@ForAll @StringLength(max = 2000) String body, @ForAll @StringLength(min = 1, max = 40) String jobId) {
        PayloadSeal seal = new PayloadSeal(KEY, List.of());
        Map<String, MessageAttribute> attrs = Map.of("job-id", MessageAttribute.string(jobId), "generation", MessageAttribute.number(2),
                "blob", new MessageAttribute("Binary", null, new byte[]{0, 1, (byte) 255}));
        PayloadSeal.Opened opened = seal.open(jobId, seal.seal(jobId, body, attrs));
        assertEquals(body, opened.body());
        assertEquals(attrs.keySet(), opened.attributes().keySet());
        assertEquals(jobId, opened.attributes().get("job-id").stringValue());
        assertArrayEquals(new byte[]{0, 1, (byte) 255}, opened.attributes().get("blob").binaryValue());
    }

    @Test
    void theBodyIsNotReadableInTheSealedBytes() {
        PayloadSeal seal = new PayloadSeal(KEY, List.of());
        String body = "{\"permitId\":\"P-SECRET-CUSTOMER-7\"}".repeat(20);
        String sealed = new String(seal.seal("j-1", body, Map.of()), StandardCharsets.ISO_8859_1);
        assertFalse(sealed.contains("P-SECRET-CUSTOMER-7"));
        assertFalse(sealed.contains("permitId"));
    }

    @Test
    void anEntryCopiedUnderAnotherJobIdOrAlteredDoesNotOpen() {
        PayloadSeal seal = new PayloadSeal(KEY, List.of());
        byte[] sealed = seal.seal("j-1", "body", Map.of());
        assertThrows(VaultUnreadable.class, () -> seal.open("j-2", sealed));
        byte[] altered = sealed.clone();
        altered[altered.length - 1] ^= 1;
        assertThrows(VaultUnreadable.class, () -> seal.open("j-1", altered));
        assertThrows(VaultUnreadable.class, () -> seal.open("j-1", new byte[]{1, 2, 3}));
    }

    @Test
    void afterARotationOldEntriesOpenWithThePreviousKeyAndNewOnesUseTheActiveKey() {
        byte[] old = new PayloadSeal(OLD, List.of()).seal("j-1", "before rotation", Map.of());
        PayloadSeal rotated = new PayloadSeal(KEY, List.of(OLD));
        assertEquals("before rotation", rotated.open("j-1", old).body());
        byte[] fresh = rotated.seal("j-1", "after rotation", Map.of());
        assertEquals("after rotation", new PayloadSeal(KEY, List.of()).open("j-1", fresh).body());
        VaultUnreadable e = assertThrows(VaultUnreadable.class, () -> new PayloadSeal(KEY, List.of()).open("j-1", old));
        assertTrue(e.getMessage().contains(PayloadSeal.keyId(OLD)), "names the missing key by id: " + e.getMessage());
        assertFalse(e.getMessage().contains(new String(OLD, StandardCharsets.ISO_8859_1)));
    }

    @Test
    void aKeyOfTheWrongLengthIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new PayloadSeal(new byte[16], List.of()));
    }
}

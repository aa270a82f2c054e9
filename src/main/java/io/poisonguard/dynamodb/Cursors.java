package io.poisonguard.dynamodb;

import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Page cursors: a DynamoDB LastEvaluatedKey of string and number attributes, sealed with AES-256-GCM into opaque URL-safe
 * text. Sealed, not only encoded: a page of a filtered listing ends on the last record the query read, which may be one
 * the caller may not see (another tenant's, under a tenant-scoped token), and its key names that record's tenant and job
 * id. A cursor that does not open is a client error.
 */
final class Cursors {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int IV_BYTES = 12;
    private static final int TAG_BITS = 128;
    /** Sealed with a key of this process only: cursors one process gave are refused by another. */
    static final Cursors PROCESS = new Cursors(randomKey());

    private final SecretKeySpec key;
    /** Keys a cursor may also have been sealed with: derived from the secrets before a rotation. */
    private final List<SecretKeySpec> earlier;

    private Cursors(byte[] key, List<byte[]> earlier) {
        this.key = new SecretKeySpec(key, "AES");
        this.earlier = earlier.stream().map(k -> new SecretKeySpec(k, "AES")).toList();
    }

    private Cursors(byte[] key) {
        this(key, List.of());
    }

    /**
     * Sealed with a key derived from {@code secret} (32 bytes): every process given the same secret opens the others'
     * cursors. Cursors sealed under keys derived from {@code previous} secrets (before a rotation) still open.
     */
    static Cursors derivedFrom(byte[] secret, List<byte[]> previous) {
        return new Cursors(derive(secret), previous.stream().map(Cursors::derive).toList());
    }

    private static byte[] derive(byte[] secret) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal("poison-guard listing cursors v1".getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    private static byte[] randomKey() {
        byte[] k = new byte[32];
        RANDOM.nextBytes(k);
        return k;
    }

    private List<SecretKeySpec> keys() {
        if (earlier.isEmpty()) {
            return List.of(key);
        }
        List<SecretKeySpec> all = new java.util.ArrayList<>(earlier.size() + 1);
        all.add(key);
        all.addAll(earlier);
        return all;
    }

    String encode(Map<String, AttributeValue> lastKey) {
        StringBuilder sb = new StringBuilder();
        lastKey.forEach((k, v) -> sb.append(k).append('=').append(v.s() != null ? "S:" + v.s() : "N:" + v.n()).append('\u0000'));
        byte[] iv = new byte[IV_BYTES];
        RANDOM.nextBytes(iv);
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, iv));
            byte[] sealed = c.doFinal(sb.toString().getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(ByteBuffer.allocate(IV_BYTES + sealed.length).put(iv).put(sealed).array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    Map<String, AttributeValue> decode(String cursor) {
        String text = null;
        byte[] all;
        try {
            all = Base64.getUrlDecoder().decode(cursor);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cursor is not valid");
        }
        for (SecretKeySpec k : keys()) {
            try {
                Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
                c.init(Cipher.DECRYPT_MODE, k, new GCMParameterSpec(TAG_BITS, all, 0, IV_BYTES));
                text = new String(c.doFinal(all, IV_BYTES, all.length - IV_BYTES), StandardCharsets.UTF_8);
                break;
            } catch (GeneralSecurityException | RuntimeException e) {
                // Not sealed with this key: the next one, if any.
            }
        }
        if (text == null) {
            throw new IllegalArgumentException("cursor is not valid");
        }
        try {
            Map<String, AttributeValue> key = new HashMap<>();
            for (String part : text.split("\u0000")) {
                if (part.isEmpty()) {
                    continue;
                }
                int eq = part.indexOf('=');
                String name = part.substring(0, eq);
                String typed = part.substring(eq + 1);
                key.put(name, typed.startsWith("S:") ? Attrs.s(typed.substring(2)) : AttributeValue.fromN(typed.substring(2)));
            }
            return key;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cursor is not valid");
        }
    }
}

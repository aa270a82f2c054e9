package io.poisonguard.vault;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.poisonguard.admission.MessageAttribute;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Seals a payload for the vault: the body and attributes as JSON, gzipped, then AES-256-GCM encrypted
 * with the job id as associated data (an entry copied under another job id does not open). The sealed
 * bytes start with a format byte and the key's id (the first 8 bytes of the key's SHA-256), so keys can
 * be rotated: new entries use the active key, older ones open with any configured previous key.
 */
public final class PayloadSeal {
    private static final byte FORMAT = 1;
    private static final int KID_BYTES = 8;
    private static final int IV_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] activeKid;
    private final SecretKeySpec activeKey;
    private final Map<String, SecretKeySpec> byKid = new HashMap<>();

    /**
     * @param active   the key new entries are sealed with: 32 bytes
     * @param previous keys entries sealed earlier may use (rotation); never used to seal
     */
    public PayloadSeal(byte[] active, List<byte[]> previous) {
        this.activeKey = aesKey(active);
        this.activeKid = kid(active);
        byKid.put(HexFormat.of().formatHex(activeKid), activeKey);
        for (byte[] k : previous) {
            byKid.putIfAbsent(HexFormat.of().formatHex(kid(k)), aesKey(k));
        }
    }

    /** The id of a key as the sealed bytes carry it (hex): safe to log, says nothing of the key. */
    public static String keyId(byte[] key) {
        return HexFormat.of().formatHex(kid(key));
    }

    public byte[] seal(String jobId, String body, Map<String, MessageAttribute> attributes) {
        byte[] plain = gzip(json(body, attributes));
        byte[] iv = new byte[IV_BYTES];
        RANDOM.nextBytes(iv);
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.ENCRYPT_MODE, activeKey, new GCMParameterSpec(TAG_BITS, iv));
            c.updateAAD(jobId.getBytes(StandardCharsets.UTF_8));
            byte[] sealed = c.doFinal(plain);
            return ByteBuffer.allocate(1 + KID_BYTES + IV_BYTES + sealed.length).put(FORMAT).put(activeKid).put(iv).put(sealed).array();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    /** The body and attributes; throws {@link VaultUnreadable} when the bytes do not open for this job id. */
    public Opened open(String jobId, byte[] sealed) {
        if (sealed.length < 1 + KID_BYTES + IV_BYTES + TAG_BITS / 8 || sealed[0] != FORMAT) {
            throw new VaultUnreadable("vault entry of job " + jobId + " is not in a known format");
        }
        ByteBuffer in = ByteBuffer.wrap(sealed);
        in.get();
        byte[] kid = new byte[KID_BYTES];
        in.get(kid);
        SecretKeySpec key = byKid.get(HexFormat.of().formatHex(kid));
        if (key == null) {
            throw new VaultUnreadable("vault entry of job " + jobId + " is sealed with key " + HexFormat.of().formatHex(kid)
                    + ", which is not configured (poison-guard.payload-vault.key or previous-keys)");
        }
        byte[] iv = new byte[IV_BYTES];
        in.get(iv);
        byte[] rest = new byte[in.remaining()];
        in.get(rest);
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, iv));
            c.updateAAD(jobId.getBytes(StandardCharsets.UTF_8));
            return fromJson(gunzip(c.doFinal(rest)));
        } catch (javax.crypto.AEADBadTagException e) {
            throw new VaultUnreadable("vault entry of job " + jobId + " does not authenticate (altered, or not this job's)", e);
        } catch (GeneralSecurityException e) {
            throw new VaultUnreadable("vault entry of job " + jobId + " could not be decrypted", e);
        }
    }

    public record Opened(String body, Map<String, MessageAttribute> attributes) {
    }

    private static byte[] json(String body, Map<String, MessageAttribute> attributes) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attributes.forEach((name, a) -> {
            Map<String, String> v = new LinkedHashMap<>();
            v.put("type", a.dataType());
            if (a.stringValue() != null) {
                v.put("string", a.stringValue());
            }
            if (a.binaryValue() != null) {
                v.put("binary", Base64.getEncoder().encodeToString(a.binaryValue()));
            }
            attrs.put(name, v);
        });
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("body", body);
        doc.put("attributes", attrs);
        try {
            return JSON.writeValueAsBytes(doc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Opened fromJson(byte[] bytes) {
        try {
            Map<String, Object> doc = JSON.readValue(bytes, Map.class);
            Map<String, MessageAttribute> attributes = new LinkedHashMap<>();
            ((Map<String, Map<String, String>>) doc.getOrDefault("attributes", Map.of())).forEach((name, v) -> attributes.put(name,
                    new MessageAttribute(v.get("type"), v.get("string"), v.get("binary") == null ? null : Base64.getDecoder().decode(v.get("binary")))));
            return new Opened((String) doc.get("body"), attributes);
        } catch (IOException | ClassCastException e) {
            throw new VaultUnreadable("vault entry opened but its content is not a payload", e);
        }
    }

    private static byte[] gzip(byte[] plain) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(plain.length / 2 + 64);
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(plain);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static byte[] gunzip(byte[] packed) {
        try (GZIPInputStream z = new GZIPInputStream(new ByteArrayInputStream(packed))) {
            return z.readAllBytes();
        } catch (IOException e) {
            throw new VaultUnreadable("vault entry opened but does not unpack", e);
        }
    }

    private static SecretKeySpec aesKey(byte[] key) {
        if (key.length != 32) {
            throw new IllegalArgumentException("a vault key is 32 bytes (AES-256), this one is " + key.length);
        }
        return new SecretKeySpec(key, "AES");
    }

    private static byte[] kid(byte[] key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key);
            byte[] kid = new byte[KID_BYTES];
            System.arraycopy(digest, 0, kid, 0, KID_BYTES);
            return kid;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.poisonguard.dynamodb;

import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * Page cursors: a DynamoDB LastEvaluatedKey of string and number attributes, as opaque URL-safe
 * text ("name=S:value;..."). A cursor that does not parse is a client error.
 */
final class Cursors {
    private Cursors() {
    }

    static String encode(Map<String, AttributeValue> key) {
        StringBuilder sb = new StringBuilder();
        key.forEach((k, v) -> sb.append(k).append('=').append(v.s() != null ? "S:" + v.s() : "N:" + v.n()).append('\u0000'));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    static Map<String, AttributeValue> decode(String cursor) {
        try {
            String text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
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

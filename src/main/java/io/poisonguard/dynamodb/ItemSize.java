package io.poisonguard.dynamodb;

import io.poisonguard.admission.Preflight;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.Map;

/**
 * An item's size as DynamoDB bills it, never under it: each attribute name's UTF-8 bytes plus its value's
 * (a string's UTF-8 bytes; a number at one byte per digit plus one, above the service's count; lists and
 * maps three bytes plus one per element, plus their elements and, for maps, their names).
 */
final class ItemSize {
    private ItemSize() {
    }

    static long of(Map<String, AttributeValue> item) {
        long n = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            n += utf8(e.getKey()) + value(e.getValue());
        }
        return n;
    }

    private static long value(AttributeValue v) {
        if (v.s() != null) {
            return utf8(v.s());
        }
        if (v.n() != null) {
            return v.n().length() + 1L;
        }
        if (v.bool() != null || Boolean.TRUE.equals(v.nul())) {
            return 1;
        }
        if (v.b() != null) {
            return v.b().asByteArray().length;
        }
        if (v.hasL()) {
            long n = 3;
            for (AttributeValue e : v.l()) {
                n += 1 + value(e);
            }
            return n;
        }
        if (v.hasM()) {
            return 3 + of(v.m()) + v.m().size();
        }
        if (v.hasSs()) {
            return v.ss().stream().mapToLong(ItemSize::utf8).sum();
        }
        if (v.hasNs()) {
            return v.ns().stream().mapToLong(x -> x.length() + 1L).sum();
        }
        if (v.hasBs()) {
            return v.bs().stream().mapToLong(b -> b.asByteArray().length).sum();
        }
        return 0;
    }

    private static long utf8(String s) {
        return Preflight.utf8Length(s);
    }
}

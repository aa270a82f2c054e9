package io.poisonguard.dynamodb;

import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** Small conversions between domain values and DynamoDB attribute values. Absent means null. */
final class Attrs {
    private Attrs() {
    }

    static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    static AttributeValue n(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }

    static AttributeValue millis(Instant t) {
        return n(t.toEpochMilli());
    }

    /** TTL attributes must hold epoch seconds. */
    static AttributeValue epochSeconds(Instant t) {
        return n(t.getEpochSecond());
    }

    static String str(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.s() == null ? null : v.s();
    }

    static Integer integer(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? null : Integer.valueOf(v.n());
    }

    static long lng(Map<String, AttributeValue> item, String name, long dflt) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? dflt : Long.parseLong(v.n());
    }

    static Instant instantMillis(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? null : Instant.ofEpochMilli(Long.parseLong(v.n()));
    }

    static Instant instantSeconds(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? null : Instant.ofEpochSecond(Long.parseLong(v.n()));
    }

    static Duration durationMillis(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? null : Duration.ofMillis(Long.parseLong(v.n()));
    }

    /**
     * dynalite (and real DynamoDB between TTL sweeps) may still return an item whose TTL passed;
     * every read treats such an item as gone.
     */
    static boolean expired(Map<String, AttributeValue> item, String ttlAttribute, Instant now) {
        Instant at = instantSeconds(item, ttlAttribute);
        return at != null && !at.isAfter(now);
    }
}

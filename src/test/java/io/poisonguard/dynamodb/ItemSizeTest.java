package io.poisonguard.dynamodb;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ItemSizeTest {
    @Test
    void namesAndValuesCountInUtf8BytesNumbersAtADigitEachPlusOne() {
        assertEquals(1 + 3 + 2 + 3, ItemSize.of(Map.of("a", AttributeValue.fromS("xyz"), "bb", AttributeValue.fromN("12"))));
        assertEquals(2 + 2, ItemSize.of(Map.of("é", AttributeValue.fromS("ü"))), "two bytes each in UTF-8");
    }

    @Test
    void listsAndMapsAddThreeBytesAndOnePerElement() {
        AttributeValue list = AttributeValue.fromL(List.of(AttributeValue.fromS("ab"), AttributeValue.fromN("7")));
        assertEquals(1 + 3 + (1 + 2) + (1 + 2), ItemSize.of(Map.of("h", list)));
        AttributeValue map = AttributeValue.fromM(Map.of("k", AttributeValue.fromBool(true)));
        assertEquals(1 + 3 + (1 + 1) + 1, ItemSize.of(Map.of("m", map)));
    }
}

package io.poisonguard.admission;

/** An SQS message attribute as the domain sees it: its data type ("String", "Number", "Binary"...) and text. */
public record MessageAttribute(String dataType, String stringValue, byte[] binaryValue) {
    public static MessageAttribute string(String value) {
        return new MessageAttribute("String", value, null);
    }

    public static MessageAttribute number(long value) {
        return new MessageAttribute("Number", Long.toString(value), null);
    }
}

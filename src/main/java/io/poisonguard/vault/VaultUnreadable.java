package io.poisonguard.vault;

/** A vault entry exists but cannot be opened: incomplete, tampered with, or sealed with a key not configured here. */
public class VaultUnreadable extends RuntimeException {
    public VaultUnreadable(String message) {
        super(message);
    }

    public VaultUnreadable(String message, Throwable cause) {
        super(message, cause);
    }
}

package io.poisonguard.dynamodb;

import io.poisonguard.config.Configs;
import io.poisonguard.config.Names;
import io.poisonguard.vault.PayloadVault;
import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Clock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A vault without a usable key stops the boot, naming the key; switched off, it needs none. */
class PayloadVaultSettingsTest {
    private static final String KEY = "poison-guard.payload-vault.key";

    private static PayloadVault vault(Configs c) {
        return new DynamoBeans().payloadVault(null, new Names("p"), Clock.systemUTC(), c.build());
    }

    @Test
    void aMissingKeyIsAConfigurationErrorNamingIt() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> vault(Configs.defaults()));
        assertTrue(e.getConfigKeys().contains(KEY), e.getMessage());
    }

    @Test
    void aKeyThatIsNotBase64OrNot32BytesIsRefusedWithoutEchoingIt() {
        ConfigurationException notBase64 = assertThrows(ConfigurationException.class, () -> vault(Configs.defaults().set(KEY, "not*base64!")));
        assertTrue(notBase64.getConfigKeys().contains(KEY));
        assertFalse(notBase64.getMessage().contains("not*base64!"), "a secret never reaches the message");
        ConfigurationException shortKey = assertThrows(ConfigurationException.class,
                () -> vault(Configs.defaults().set(KEY, "AAAAAAAAAAAAAAAAAAAAAA==")));
        assertTrue(shortKey.getMessage().contains("32 bytes"), shortKey.getMessage());
        ConfigurationException previous = assertThrows(ConfigurationException.class, () -> vault(Configs.defaults()
                .set(KEY, "C+in3Dx2uChb08BW4FHr0OAeC5sp0PVFBDxxHEkd00Q=").set("poison-guard.payload-vault.previous-keys", "xyz")));
        assertTrue(previous.getConfigKeys().contains("poison-guard.payload-vault.previous-keys"));
    }

    @Test
    void switchedOffItNeedsNoKey() {
        assertSame(PayloadVault.DISABLED, vault(Configs.defaults().set("poison-guard.payload-vault.enabled", "false")));
    }

    @Test
    void aGoodKeyMakesAVault() {
        assertTrue(vault(Configs.defaults().set(KEY, "C+in3Dx2uChb08BW4FHr0OAeC5sp0PVFBDxxHEkd00Q=")).enabled());
    }
}

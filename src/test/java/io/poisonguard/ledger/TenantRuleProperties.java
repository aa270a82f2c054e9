package io.poisonguard.ledger;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The hand-written tenant check says exactly what the documented pattern says, for any string. */
class TenantRuleProperties {
    @Property(tries = 3000)
    void theHandWrittenCheckAgreesWithThePattern(@ForAll("tenants") String tenant) {
        assertEquals(JobKey.TENANT.matcher(tenant).matches(), JobKey.validTenant(tenant), "for \"" + tenant + "\"");
    }

    @Provide
    Arbitrary<String> tenants() {
        // Mostly near-valid names (the interesting edge), plus any text at all.
        Arbitrary<String> nearValid = Arbitraries.strings().withChars("aZ09._-/ é\u0000").ofMinLength(0).ofMaxLength(70);
        return Arbitraries.oneOf(nearValid, Arbitraries.strings().ofMaxLength(80));
    }
}

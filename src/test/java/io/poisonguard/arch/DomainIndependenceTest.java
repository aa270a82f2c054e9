package io.poisonguard.arch;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The domain speaks its own language; only the sqs and dynamodb adapters import the AWS SDK. */
class DomainIndependenceTest {
    private static final String[] DOMAIN = {
            "io.poisonguard.failure..", "io.poisonguard.ladder..", "io.poisonguard.ledger..", "io.poisonguard.admission..",
            "io.poisonguard.disposition..", "io.poisonguard.quarantine..", "io.poisonguard.effects..", "io.poisonguard.handler.."};

    private static JavaClasses production;

    @BeforeAll
    static void importProductionClasses() {
        production = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.poisonguard");
    }

    private static ArchRule noAwsSdkIn(String... packages) {
        return noClasses().that().resideInAnyPackage(packages)
                .should().dependOnClassesThat().resideInAPackage("software.amazon..")
                .because("only adapters translate to and from the AWS SDK");
    }

    @Test
    void domainPackagesDoNotDependOnTheAwsSdk() {
        noAwsSdkIn(DOMAIN).check(production);
    }

    @Test
    void packagesDoNotDependOnEachOtherInACycle() {
        slices().matching("io.poisonguard.(*)..").should().beFreeOfCycles().check(production);
    }

    @Test
    void theRuleSeesTheDomainAndCatchesAnAdapter() {
        assertTrue(production.contain("io.poisonguard.disposition.Decisions"), "the domain classes were imported");
        assertTrue(production.contain("io.poisonguard.failure.Classifier"), "the domain classes were imported");
        // The same rule over an adapter package must fail, or the check above proves nothing.
        assertThrows(AssertionError.class, () -> noAwsSdkIn("io.poisonguard.sqs..").check(production));
    }
}

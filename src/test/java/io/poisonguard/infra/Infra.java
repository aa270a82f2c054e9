package io.poisonguard.infra;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.poisonguard.config.Names;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/** Where the deployment files are, and what the code says about names. */
final class Infra {
    static final Path ROOT = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();
    private static JavaClasses production;

    private Infra() {
    }

    /** The compiled production classes (target/classes), imported once. */
    static synchronized JavaClasses production() {
        if (production == null) {
            production = new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("io.poisonguard");
        }
        return production;
    }

    /**
     * Every queue and table name {@link Names} derives, by accessor ({@code jobsQueue -> <prefix>-jobs}),
     * found by reflection so that a name added to the code is checked without touching this test.
     */
    static Map<String, String> names(String prefix) {
        Names names = new Names(prefix);
        Map<String, String> out = new TreeMap<>();
        for (Method m : Names.class.getMethods()) {
            if (isNameAccessor(m)) {
                try {
                    out.put(m.getName(), (String) m.invoke(names));
                } catch (IllegalAccessException | InvocationTargetException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return out;
    }

    static boolean isNameAccessor(Method m) {
        return m.getDeclaringClass() == Names.class && m.getParameterCount() == 0 && m.getReturnType() == String.class
                && !Modifier.isStatic(m.getModifiers())
                && !m.getName().equals("prefix") && !m.getName().equals("toString");
    }
}

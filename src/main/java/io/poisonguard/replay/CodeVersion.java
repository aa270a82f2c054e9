package io.poisonguard.replay;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The build version and commit that audit entries name as the code that acted. */
@ApplicationScoped
public class CodeVersion {
    private final String value;

    public CodeVersion(@ConfigProperty(name = "quarkus.application.version", defaultValue = "unknown") String version) {
        String commit = "unknown";
        try (InputStream in = CodeVersion.class.getClassLoader().getResourceAsStream("git.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                commit = p.getProperty("git.commit.id.abbrev", "unknown") + ("true".equals(p.getProperty("git.dirty")) ? "-dirty" : "");
            }
        } catch (IOException e) {
            commit = "unreadable";
        }
        this.value = version + "+" + commit;
    }

    public String value() {
        return value;
    }
}

package dev.lattice.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaging rules of the build, read from the POMs so they cannot drift: lattice-bom lists exactly the shipped
 * artifacts (the modules that build sources and Javadoc jars), and every module of lattice-parent names its own
 * Automatic-Module-Name.
 */
class BuildLayoutTest {

    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    private static List<String> all(Pattern p, String text) {
        List<String> out = new ArrayList<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static String withoutParentAndComments(String pom) {
        return pom.replaceAll("(?s)<!--.*?-->", "").replaceFirst("(?s)<parent>.*?</parent>", "");
    }

    @Test
    void bomListsExactlyTheShippedArtifactsAndEveryModuleNamesItself() throws IOException {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        Set<String> shipped = new TreeSet<>();
        Set<String> moduleNames = new TreeSet<>();
        int modules = 0;
        for (String module : all(Pattern.compile("<module>([^<]+)</module>"), root)) {
            String raw = Files.readString(ROOT.resolve(module).resolve("pom.xml"));
            String pom = withoutParentAndComments(raw);
            boolean child = raw.contains("<artifactId>lattice-parent</artifactId>");
            if (!child || pom.contains("<packaging>pom</packaging>")) {
                continue;   // the BOM and stand-alone example projects
            }
            modules++;
            String artifact = all(Pattern.compile("<artifactId>([^<]+)</artifactId>"), pom).get(0);
            List<String> name = all(Pattern.compile("<lattice.module.name>([^<]+)</lattice.module.name>"), pom);
            assertThat(name).as(module + " sets lattice.module.name").hasSize(1);
            assertThat(name.get(0)).as(module).startsWith("dev.lattice.");
            assertThat(moduleNames.add(name.get(0))).as("unique module name " + name.get(0)).isTrue();
            if (!pom.contains("<maven.javadoc.skip>true</maven.javadoc.skip>")) {
                shipped.add(artifact);
            }
        }
        assertThat(modules).isGreaterThanOrEqualTo(13);
        String bom = Files.readString(ROOT.resolve("bom/pom.xml"));
        assertThat(bom).doesNotContain("<parent>");
        Set<String> inBom = new TreeSet<>(all(Pattern.compile("<artifactId>(lattice-[^<]+)</artifactId>"),
                bom.substring(bom.indexOf("<dependencyManagement>"))));
        String managed = bom.substring(bom.indexOf("<dependencyManagement>"), bom.indexOf("</dependencyManagement>"));
        assertThat(all(Pattern.compile("<groupId>([^<]+)</groupId>"), managed)).containsOnly("dev.lattice");
        assertThat(inBom).isEqualTo(shipped).contains("lattice-engine", "lattice-spi", "lattice-conformance", "lattice-testkit",
                "lattice-spring-boot-starter").doesNotContain("lattice-test-backends", "lattice-examples");
    }
}

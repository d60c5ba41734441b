package dev.lattice.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The code users paste from the docs is the code this build compiles and runs: README's Java snippet is
 * {@link EmbeddedChronicleExample} (without its package line), and docs/conformance.md shows the custom-provider
 * example project's pom.xml and conformance test class verbatim.
 */
class DocSnippetsTest {

    /** The examples module's directory (Surefire runs tests there). */
    private static final Path EXAMPLES = Path.of("").toAbsolutePath();
    private static final Path ROOT = EXAMPLES.getParent();

    private static String read(Path p) throws IOException {
        return Files.readString(p).replace("\r\n", "\n");
    }

    private static String withoutPackage(String source) {
        return source.replaceFirst("(?s)^package [^;]+;\n\n", "");
    }

    @Test
    void readmeSnippetIsTheChronicleExample() throws IOException {
        String example = withoutPackage(read(EXAMPLES.resolve(
                "src/main/java/dev/lattice/examples/EmbeddedChronicleExample.java")));
        assertThat(read(ROOT.resolve("README.md"))).contains("```java\n" + example + "```\n");
    }

    @Test
    void conformanceDocShowsTheCustomProviderProjectAsBuilt() throws IOException {
        String doc = read(ROOT.resolve("docs/conformance.md"));
        Path project = EXAMPLES.resolve("custom-provider");
        assertThat(doc).contains("```xml\n" + read(project.resolve("pom.xml")) + "```\n");
        assertThat(doc).contains("```java\n" + read(project.resolve(
                "src/test/java/com/example/lattice/ExampleWalProviderConformanceTest.java")) + "```\n");
        assertThat(doc).contains("```\n" + read(project.resolve(
                "src/main/resources/META-INF/services/dev.lattice.spi.WalStorageProviderFactory")) + "```\n");
    }
}

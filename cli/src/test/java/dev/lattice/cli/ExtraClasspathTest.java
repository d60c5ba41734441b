package dev.lattice.cli;

import dev.lattice.spi.WalStorageProviderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CLI loads extra provider jars ({@code --classpath} or {@code LATTICE_CLASSPATH}), so a third-party provider
 * works with every command (issue 20 part 6). The jar is built here from the sources of
 * {@code examples/custom-provider} (scheme {@code example}), which are not on the CLI's class path.
 */
class ExtraClasspathTest {

    @TempDir
    static Path work;

    private static Path jar;

    @BeforeAll
    static void buildTheExampleProviderJar() throws Exception {
        Path project = Path.of("..", "examples", "custom-provider").toAbsolutePath().normalize();
        List<String> sources;
        try (Stream<Path> s = Files.walk(project.resolve("src/main/java"))) {
            sources = s.filter(p -> p.toString().endsWith(".java")).map(Path::toString).toList();
        }
        assertThat(sources).isNotEmpty();
        Path classes = Files.createDirectories(work.resolve("classes"));
        String spi = Path.of(WalStorageProviderFactory.class.getProtectionDomain().getCodeSource().getLocation()
                .toURI()).toString();
        List<String> args = new ArrayList<>(List.of("--release", "17", "-d", classes.toString(), "-cp", spi));
        args.addAll(sources);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        assertThat(javac.run(null, diag, diag, args.toArray(new String[0]))).as(diag.toString()).isZero();
        Path services = project.resolve("src/main/resources");
        jar = work.resolve("my-lattice-provider.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            add(out, classes);
            add(out, services);
        }
    }

    private static void add(JarOutputStream out, Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path f : s.filter(Files::isRegularFile).sorted().toList()) {
                out.putNextEntry(new JarEntry(root.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
    }

    private static Cli.Run run(String envClasspath, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), envClasspath);
        return new Cli.Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void withoutTheJarTheSchemeIsUnknown() {
        Cli.Run r = run(null, "get", "--provider", "example:absent", "t", "k");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("no Lattice provider for scheme 'example'");
    }

    @Test
    void everyCommandWorksOnTheThirdPartyProviderGivenWithTheOption() {
        String uri = "example:cli-" + UUID.randomUUID();
        String cp = "--classpath=" + jar;
        Cli.Run put = run(null, "put", "--classpath", jar.toString(), "--provider", uri, "orders", "o-1", "first");
        assertThat(put.code()).as(put.toString()).isZero();
        assertThat(run(null, "put", "--provider", uri, "orders", "o-2", "second", cp).code()).isZero();
        Cli.Run get = run(null, cp, "get", "--provider", uri, "orders", "o-1");
        assertThat(get.code()).as(get.toString()).isZero();
        assertThat(get.out().strip()).isEqualTo("first");
        Cli.Run scan = run(null, cp, "scan", "--provider", uri, "orders");
        assertThat(scan.out().lines().toList()).as(scan.toString()).containsExactly("o-1\tfirst", "o-2\tsecond");
        Cli.Run del = run(null, cp, "delete", "--provider", uri, "orders", "o-2");
        assertThat(del.code()).as(del.toString()).isZero();
        Cli.Run inspect = run(null, cp, "wal", "inspect", "--provider", uri);
        assertThat(inspect.code()).as(inspect.toString()).isZero();
        assertThat(inspect.out()).contains("orders/0");
        Cli.Run providers = run(null, cp, "providers");
        assertThat(providers.out()).as(providers.toString())
                .contains("example provider (in-process memory, a template for third-party providers)");
        Cli.Run placement = run(null, cp, "placement", "show", "--provider", uri, "orders");
        assertThat(placement.code()).as(placement.toString()).isZero();
    }

    @Test
    void theEnvironmentVariableWorksTooAndAWrongEntryIsAUsageError() {
        String uri = "example:cli-env-" + UUID.randomUUID();
        String list = work.resolve("nothing-here").getParent() + "/*";
        Cli.Run put = run(list, "put", "--provider", uri, "t", "k", "v");
        assertThat(put.code()).as(put.toString()).isZero();
        Cli.Run get = run(jar.toString(), "get", "--provider", uri, "t", "k");
        assertThat(get.out().strip()).as(get.toString()).isEqualTo("v");
        Cli.Run missing = run(null, "--classpath", "/no/such.jar", "providers");
        assertThat(missing.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err().strip()).isEqualTo("lattice: extra classpath entry '/no/such.jar' does not exist "
                + "(from --classpath or $LATTICE_CLASSPATH)");
        Cli.Run noValue = run(null, "providers", "--classpath");
        assertThat(noValue.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(noValue.err()).contains("--classpath needs a value");
    }

    @Test
    void theUsageHelpNamesTheOption() {
        Cli.Run help = run(null, "--help");
        assertThat(help.out()).contains("--classpath=PATH").contains("LATTICE_CLASSPATH");
    }
}

package dev.lattice.provider.chronicle;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The provider keeps Chronicle quiet and private by itself (issue 20 part 4): a child JVM started with only the three
 * required {@code --add-opens}/{@code --add-exports} flags (no {@code -Dchronicle.*}), with {@code HOME},
 * {@code user.home}, {@code java.io.tmpdir} and the working directory each a fresh empty directory, opens a provider
 * through {@code Providers.open("chronicle:...")} and appends. Nothing may appear outside the data directory, and
 * its output may carry no analytics or announcer line, no "Took N ms" note at INFO and no stack trace.
 *
 * <p>The child's class path is this test's without JUnit: Chronicle mutes its analytics when it sees JUnit, which
 * would let this test pass on a provider that does nothing. The control run ({@code -Dlattice.chronicle.quiet=false})
 * proves the setup sees what Chronicle does when left alone: it writes its analytics client id into the home.
 */
class ChronicleQuietTest {

    private final Path base = TestDirs.create("chronicle-quiet");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(base);
    }

    /** What one child run left behind and printed. */
    private record Run(String stdout, String stderr, List<String> outsideData) {
        String all() {
            return stdout + "\n" + stderr;
        }
    }

    private Run run(String name, String... extraFlags) throws IOException, InterruptedException {
        Path home = Files.createDirectories(base.resolve(name).resolve("home"));
        Path tmp = Files.createDirectories(base.resolve(name).resolve("tmp"));
        Path cwd = Files.createDirectories(base.resolve(name).resolve("cwd"));
        Path data = base.resolve(name).resolve("data");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(MissingJvmFlagsException.REQUIRED_FLAGS);
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--enable-native-access") || a.startsWith("--sun-misc-unsafe-memory-access")) {
                cmd.add(a); // the JDK 24+ flags the README lists, when this JVM has them
            }
        }
        cmd.add("-Duser.home=" + home);
        cmd.add("-Djava.io.tmpdir=" + tmp);
        cmd.addAll(List.of(extraFlags));
        cmd.add("-cp");
        cmd.add(classPathWithoutJUnit());
        cmd.add(ChildMains.class.getName());
        cmd.add("open-uri");
        cmd.add("chronicle:" + data);
        Path out = base.resolve(name + ".out");
        Path err = base.resolve(name + ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("HOME", home.toString());
        pb.environment().remove("XDG_CACHE_HOME");
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child finished").isTrue();
        List<String> outside = new ArrayList<>();
        // Chronicle Core's OS class creates <java.io.tmpdir>/target when no target/ or build/ directory lies above
        // the working directory (a folder for generated-code dumps): only that, and only empty, is allowed
        Path chronicleTarget = tmp.resolve("target");
        for (Path dir : List.of(home, tmp, cwd)) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.filter(f -> !f.equals(dir) && !f.equals(chronicleTarget)).forEach(f -> outside.add(f.toString()));
            }
        }
        assertThat(Files.isDirectory(data)).as("the data directory was written").isTrue();
        return new Run(Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8),
                outside);
    }

    private static String classPathWithoutJUnit() {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return Stream.of(cp.split(File.pathSeparator))
                .filter(e -> !e.contains("junit") && !e.contains("opentest4j") && !e.contains("apiguardian"))
                .collect(Collectors.joining(File.pathSeparator));
    }

    @Test
    void withoutAnyChronicleFlagNothingIsWrittenOutsideTheDataDirectoryAndNothingIsAnnounced() throws Exception {
        Run r = run("quiet");
        assertThat(r.stdout()).contains("OPENED");
        assertThat(r.outsideData()).as("files outside the data directory (home, temp dir, working dir)").isEmpty();
        assertThat(r.all()).doesNotContainIgnoringCase("analytics").doesNotContain("chronicle.software")
                .doesNotContain("Running under").doesNotContain("Exception").doesNotContain("\tat ")
                .doesNotContain("Took ").doesNotContain("WARN");
        List<String> info = r.stderr().lines().filter(l -> l.contains(" INFO ")).toList();
        assertThat(info).as("the only INFO line is the one Chronicle logs before any switch applies")
                .allSatisfy(l -> assertThat(l).contains("INFO net.openhft.chronicle.core.Jvm - Chronicle core loaded"));
    }

    @Test
    void theLoweredPerformanceNotesStillShowAtDebug() throws Exception {
        Run r = run("debug", "-Dorg.slf4j.simpleLogger.defaultLogLevel=debug");
        assertThat(r.stdout()).contains("OPENED");
        assertThat(r.stderr().lines().filter(l -> l.contains(" DEBUG ") && l.contains(" ms to add mapping")))
                .as("'Took N ms to add mapping' at DEBUG").isNotEmpty();
        assertThat(r.stderr().lines().filter(l -> l.contains(" INFO ") && l.contains("Took "))).isEmpty();
        assertThat(r.outsideData()).isEmpty();
    }

    @Test
    void controlWithTheSwitchOffChronicleWritesIntoTheHomeAndAnnouncesItself() throws Exception {
        Run r = run("control", "-D" + ChronicleQuiet.SWITCH + "=false");
        assertThat(r.stdout()).contains("OPENED");
        assertThat(r.outsideData()).as("Chronicle left alone writes its analytics client id into the home")
                .anySatisfy(f -> assertThat(f).endsWith(".chronicle.analytics.client.id"));
        assertThat(r.stderr()).contains("Analytics").contains("INFO").contains("Took ");
    }
}

package dev.lattice.provider.chronicle;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without the {@code --add-opens}/{@code --add-exports} flags, opening a Chronicle provider fails at once with
 * {@link MissingJvmFlagsException} listing the flags (before: the open succeeded and the first write threw
 * {@code AssertionError: IllegalAccessException ... map0}). Runs {@code ChildMains open-uri} in child JVMs with this
 * JVM's class path, once without any flag and once with the flags (which must open and write).
 */
class JvmFlagsTest {

    private final Path dir = TestDirs.create("chronicle-flags");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private static String run(List<String> flags, String uri) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(flags);
        cmd.add("-Dchronicle.analytics.disable=true");
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add(ChildMains.class.getName());
        cmd.add("open-uri");
        cmd.add(uri);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return out.lines().filter(l -> l.startsWith("OPENED") || l.startsWith("FAILED")).findFirst()
                .orElseThrow(() -> new AssertionError("child printed no result: " + out));
    }

    @Test
    void withoutTheFlagsOpenFailsWithTheTypedExceptionListingThem() throws Exception {
        String line = run(List.of(), "chronicle:" + dir.resolve("no-flags"));
        assertThat(line).startsWith("FAILED " + MissingJvmFlagsException.class.getName());
        for (String flag : MissingJvmFlagsException.REQUIRED_FLAGS) {
            assertThat(line).contains(flag);
        }
        assertThat(dir.resolve("no-flags")).as("nothing created before the check").doesNotExist();
    }

    @Test
    void withOneFlagMissingOnlyThatOneIsNamedMissing() throws Exception {
        String line = run(List.of(MissingJvmFlagsException.REQUIRED_FLAGS.get(0),
                MissingJvmFlagsException.REQUIRED_FLAGS.get(2)), "chronicle:" + dir.resolve("one-missing"));
        assertThat(line).startsWith("FAILED " + MissingJvmFlagsException.class.getName()
                + " the Chronicle provider needs JVM flags that this JVM was started without: "
                + MissingJvmFlagsException.REQUIRED_FLAGS.get(1) + ". Start java with:");
    }

    @Test
    void withTheFlagsTheSameProgramOpensAndWrites() throws Exception {
        assertThat(run(MissingJvmFlagsException.REQUIRED_FLAGS, "chronicle:" + dir.resolve("flags")))
                .isEqualTo("OPENED");
    }

    @Test
    void inThisJvmEveryFlagIsInEffect() {
        assertThat(JvmFlags.missing(net.openhft.chronicle.queue.impl.single.SingleChronicleQueue.class.getModule()))
                .isEmpty();
    }
}

package dev.lattice.testbackends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Failures to start are loud and name the command and its output. */
class BackendFailureTest {

    @Test
    void missingExecutableNamesTheCommand() {
        assertThatThrownBy(() -> BackendProcess.start("ghost", 1,
                ports -> List.of("lattice-no-such-node-binary", "server.js", String.valueOf(ports.get(0))),
                NodeBackends.directory()))
                .isInstanceOf(BackendStartException.class)
                .hasMessageContaining("cannot start ghost")
                .hasMessageContaining("lattice-no-such-node-binary server.js");
    }

    @Test
    void serverThatExitsReportsExitCodeAndOutput() {
        assertThatThrownBy(() -> BackendProcess.start("crasher", 1,
                ports -> List.of(NodeBackends.node(), "-e", "console.error('boom on port " + ports.get(0)
                        + "'); process.exit(3)"),
                NodeBackends.directory()))
                .isInstanceOf(BackendStartException.class)
                .hasMessageContaining("crasher exited with code 3")
                .hasMessageContaining("boom on port")
                .hasMessageContaining("process.exit(3)");
    }

    @Test
    void installationIsRecordedForTheCurrentLockFile() throws Exception {
        Path dir = NodeBackends.ensureInstalled();
        assertThat(dir.resolve("package-lock.json")).isRegularFile();
        assertThat(dir.resolve("node_modules/azurite/dist/src/azurite.js")).isRegularFile();
        assertThat(dir.resolve("node_modules/dynalite/cli.js")).isRegularFile();
        assertThat(Files.readString(dir.resolve("node_modules").resolve(NodeBackends.MARKER)).trim())
                .hasSize(64);
        assertThat(NodeBackends.ensureInstalled()).isEqualTo(dir);
    }

    @Test
    void wrongConfiguredDirectoryIsRejected() {
        String old = System.getProperty(NodeBackends.DIR_PROPERTY);
        System.setProperty(NodeBackends.DIR_PROPERTY, "/nonexistent/lattice");
        try {
            assertThatThrownBy(NodeBackends::directory).isInstanceOf(BackendStartException.class)
                    .hasMessageContaining("-D" + NodeBackends.DIR_PROPERTY + "=/nonexistent/lattice");
        } finally {
            if (old == null) {
                System.clearProperty(NodeBackends.DIR_PROPERTY);
            } else {
                System.setProperty(NodeBackends.DIR_PROPERTY, old);
            }
        }
    }
}

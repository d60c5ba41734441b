package dev.lattice.cli;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Where demo and bench put their data for each kind of provider URI. */
class ScratchLocationTest {

    @Test
    void chronicleGetsASubdirectoryThatCannotBeATreeName() {
        ScratchLocation l = ScratchLocation.derive("chronicle:./lattice-data", "demo", "run", "r1");
        assertThat(l.uri()).isEqualTo("chronicle:./lattice-data/.demo/run");
        assertThat(l.directory()).isEqualTo(Path.of("./lattice-data/.demo/run"));
        assertThat(l.tree("demo")).isEqualTo("demo");
        ScratchLocation abs = ScratchLocation.derive("chronicle:///var/lib/x/?durability=fsync", "bench", "c", "r1");
        assertThat(abs.uri()).isEqualTo("chronicle:///var/lib/x/.bench/c?durability=fsync");
        assertThat(abs.directory()).isEqualTo(Path.of("/var/lib/x/.bench/c"));
        ScratchLocation spaced = ScratchLocation.derive("chronicle:/tmp/my%20data", "demo", "run", "r1");
        assertThat(spaced.directory()).isEqualTo(Path.of("/tmp/my data/.demo/run"));
    }

    @Test
    void memoryGetsItsOwnNamedStorage() {
        ScratchLocation l = ScratchLocation.derive("memory:x?maxEntriesPerBatch=9", "bench", "seq-10", "r1");
        assertThat(l.uri()).isEqualTo("memory:x.bench.seq-10?maxEntriesPerBatch=9");
        assertThat(l.directory()).isNull();
        assertThat(l.tree("replay")).isEqualTo("replay");
    }

    @Test
    void otherSchemesShareTheStorageWithRunScopedTreeNames() {
        ScratchLocation l = ScratchLocation.derive("postgres://db/lattice", "demo", "run", "r1");
        assertThat(l.uri()).isEqualTo("postgres://db/lattice");
        assertThat(l.tree("demo")).isEqualTo("demo-run-r1-demo");
        assertThat(l.directory()).isNull();
    }
}

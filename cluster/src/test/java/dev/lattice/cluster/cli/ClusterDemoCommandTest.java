package dev.lattice.cluster.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code lattice cluster demo} end to end in a child JVM, as a user runs it: an embedded PostgreSQL, three node JVMs,
 * one killed, every member on TLS with mutual authentication; the report must show that TLS is on for every member,
 * that the other partitions went on, the killed node's moved, every acknowledged
 * write is there, and that everything was shut down and removed.
 */
class ClusterDemoCommandTest {

    private ChildJvm demo;

    @AfterEach
    void killLeftovers() {
        if (demo != null && demo.process.isAlive()) {
            demo.kill();
        }
    }

    @Test
    void threeNodesOneKilledReadsAndWritesGoOnAndEverythingIsRemoved(@TempDir Path dir) throws Exception {
        demo = ChildJvm.start(dir, "cluster", "demo");
        // generous for a loaded 2-core machine; about a minute otherwise
        Integer code = demo.await(540);
        String out = demo.out();
        String err = demo.err();
        System.out.print(out); // the report, in the surefire output
        assertThat(code).as(demo.describe()).isEqualTo(0);
        assertThat(out).as(demo.describe())
                .containsPattern("(?m)^cluster +3 node JVMs \\+ this demo \\(routing only\\)")
                // every member's Pekko runs Artery tls-tcp with mutual authentication (each node prints its
                // transport from its actor system's settings; the demo checks all of them)
                .containsPattern("(?m)^tls +on: node-1, node-2, node-3, this demo all run Pekko Artery tls-tcp "
                        + "\\(TLSv1\\.3, mutual authentication\\); certificates of a throwaway CA made in \\S+/tls$")
                .containsPattern("(?m)^killed +node-\\d \\(pid \\d+, SIGKILL\\) with partitions \\[[0-9, ]+]")
                .containsPattern("(?m)^failover +partitions \\[[0-9, ]+] written again after [0-9.]+ s")
                .containsPattern("(?m)^meanwhile +partitions \\[[0-9, ]+] went on: [0-9,]+ writes acknowledged")
                .containsPattern("(?m)^reads +[0-9,]+ answered, 0 wrong")
                .containsPattern("(?m)^verification +OK: [0-9,]+ acknowledged writes read back through the cluster")
                .containsPattern("(?m)^OK: reads and writes went on after node-\\d was killed");
        assertThat(out).doesNotContain("FAILED").doesNotContain("NOT served");
        // the killed node's partitions are hosted by the survivors afterwards, the killed node is not listed
        Matcher killed = Pattern.compile("(?m)^killed +(node-\\d) ").matcher(out);
        assertThat(killed.find()).isTrue();
        Matcher after = Pattern.compile("(?m)^after the kill +(.*)$").matcher(out);
        assertThat(after.find()).isTrue();
        assertThat(after.group(1)).doesNotContain(killed.group(1) + " ");
        // the survivors left gracefully (SIGTERM: 143) and the temporary directory is gone
        assertThat(err).containsPattern("stopped: \\[node-\\d exited 143, node-\\d exited 143], PostgreSQL; removed ");
        Matcher removed = Pattern.compile("removed (\\S+)").matcher(err);
        assertThat(removed.find()).isTrue();
        assertThat(Files.exists(Path.of(removed.group(1)))).as(removed.group(1)).isFalse();
        assertThat(err).doesNotContain("lattice: ");
    }
}

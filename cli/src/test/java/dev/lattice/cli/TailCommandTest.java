package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.Tree;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code lattice tail}: prints what a running application commits, as a follower, and never fences it. */
class TailCommandTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void tailPrintsEveryKindOfChangeOfARunningApplicationWithoutFencingIt() {
        String uri = Cli.freshMemoryUri();
        try (Lattice app = Lattice.open(uri)) {
            Tree t = app.tree("orders");
            t.put("o-1", b("first"));
            t.put("o-2", b("second"), Duration.ofHours(1));
            t.delete("o-1");
            t.putAllAtomic(Map.of("a-1", b("x"), "a-2", b("y")));
            t.deleteRange("r-0", "r-9");
            long epoch0 = app.provider().state(new LogId("orders", 0)).epoch();

            Cli.Run tail = Cli.run("tail", "--provider", uri, "orders", "--from", "beginning", "--idle-exit", "1s");
            assertThat(tail.code()).as(tail.toString()).isZero();
            List<String> lines = tail.out().lines().toList();
            assertThat(lines).anyMatch(l -> l.contains("\tPUT\to-1\tfirst\t"));
            assertThat(lines).anyMatch(l -> l.contains("\tPUT\to-2\tsecond\t") && l.contains("expires "));
            assertThat(lines).anyMatch(l -> l.contains("\tDELETE\to-1\t"));
            assertThat(lines).anyMatch(l -> l.contains("\tPUT\ta-1\tx\t") && l.contains("atomic "));
            assertThat(lines).anyMatch(l -> l.contains("\tPUT\ta-2\ty\t") && l.contains("atomic "));
            assertThat(lines).anyMatch(l -> l.contains("\tDELETE_RANGE\tr-0\t..r-9"));
            assertThat(tail.err()).contains("position: v1:");

            Cli.Run limited = Cli.run("tail", "--provider", uri, "orders", "--from", "beginning", "--limit", "2");
            assertThat(limited.code()).as(limited.toString()).isZero();
            assertThat(limited.out().lines()).hasSize(2);

            assertThat(Cli.run("tail", "--provider", uri, "orders", "--from", "garbage").code())
                    .isEqualTo(ExitCodes.USAGE);
            assertThat(Cli.run("tail", "--provider", uri, "nope", "--idle-exit", "1s").code())
                    .isEqualTo(ExitCodes.NOT_FOUND);

            t.put("o-3", b("after")); // nobody fenced the application
            assertThat(app.provider().state(new LogId("orders", 0)).epoch()).isEqualTo(epoch0);
        }
    }
}

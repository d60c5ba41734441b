package dev.lattice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class PlacementCommandTest {

    @Test
    void showAuditPlanMoveReclaimAcrossInvocations(@TempDir Path dir) {
        String def = "chronicle:" + dir.resolve("default");
        String b = "b=chronicle:" + dir.resolve("b");
        for (int i = 0; i < 20; i++) {
            Cli.Run put = Cli.run("put", "--provider", def, "t", "k" + i, "v" + i);
            assertThat(put.code()).as(put.toString()).isZero();
        }
        Cli.Run show = Cli.run("placement", "show", "--provider", def, "--named", b);
        assertThat(show.code()).as(show.toString()).isZero();
        assertThat(show.out()).contains("registered keys: [default, b]").contains("t (version 1)");

        Cli.Run plan = Cli.run("placement", "plan-move", "--provider", def, "--named", b, "t", "0=b", "1=b");
        assertThat(plan.code()).as(plan.toString()).isZero();
        assertThat(plan.out()).contains("t/0: default -> b").contains("t/1: default -> b");

        Cli.Run move = Cli.run("placement", "move", "--provider", def, "--named", b, "t", "0=b");
        assertThat(move.code()).as(move.toString()).isZero();
        assertThat(move.out()).contains("t (version 2): [b, default");

        Cli.Run audit = Cli.run("placement", "audit", "--provider", def);
        assertThat(audit.code()).as("key b is missing without --named").isEqualTo(ExitCodes.FAILURE);
        assertThat(audit.out()).contains("t: missing keys [b]");

        for (int i = 0; i < 20; i++) {
            Cli.Run get = Cli.run("get", "--provider", def, "--named", b, "t", "k" + i);
            assertThat(get.code()).as(get.toString()).isZero();
            assertThat(get.out().trim()).isEqualTo("v" + i);
        }
        Cli.Run refused = Cli.run("placement", "reclaim", "--provider", def, "--named", b, "t", "0", "b");
        assertThat(refused.code()).isEqualTo(ExitCodes.FAILURE);
        assertThat(refused.err()).contains("placed on 'b'");
        Cli.Run reclaim = Cli.run("placement", "reclaim", "--provider", def, "--named", b, "t", "0", "default");
        assertThat(reclaim.code()).as(reclaim.toString()).isZero();

        Cli.Run bad = Cli.run("placement", "move", "--provider", def, "--named", b, "t", "zero=b");
        assertThat(bad.code()).isEqualTo(ExitCodes.USAGE);
    }
}

package dev.lattice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class TreeCommandTest {

    @Test
    void listInfoDropAcrossInvocations(@TempDir Path dir) {
        String def = "chronicle:" + dir.resolve("data");
        for (String tree : new String[] {"orders", "users"}) {
            Cli.Run put = Cli.run("put", "--provider", def, tree, "k1", "v1");
            assertThat(put.code()).as(put.toString()).isZero();
        }
        Cli.Run list = Cli.run("tree", "list", "--provider", def);
        assertThat(list.code()).as(list.toString()).isZero();
        assertThat(list.out()).contains("orders").contains("users").contains("[default]");

        Cli.Run info = Cli.run("tree", "info", "--provider", def, "orders");
        assertThat(info.code()).as(info.toString()).isZero();
        assertThat(info.out()).contains("tree: orders").contains("hash version: 2").contains("created: 20");

        Cli.Run unconfirmed = Cli.run("tree", "drop", "--provider", def, "orders");
        assertThat(unconfirmed.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(unconfirmed.err()).contains("--yes");

        Cli.Run drop = Cli.run("tree", "drop", "--provider", def, "orders", "--yes");
        assertThat(drop.code()).as(drop.toString()).isZero();
        assertThat(drop.out()).contains("dropped tree 'orders'");

        Cli.Run after = Cli.run("tree", "list", "--provider", def);
        assertThat(after.out()).doesNotContain("orders").contains("users");
        Cli.Run gone = Cli.run("tree", "info", "--provider", def, "orders");
        assertThat(gone.code()).isEqualTo(ExitCodes.NOT_FOUND);
        Cli.Run again = Cli.run("tree", "drop", "--provider", def, "never", "--yes");
        assertThat(again.code()).isEqualTo(ExitCodes.NOT_FOUND);
        Cli.Run get = Cli.run("get", "--provider", def, "users", "k1");
        assertThat(get.out().trim()).isEqualTo("v1");
    }
}

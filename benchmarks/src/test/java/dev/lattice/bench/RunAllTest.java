package dev.lattice.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RunAllTest {

    @Test
    void replacesOnlyTheTextBetweenItsMarkers() {
        String doc = "# T\nkeep 1\n<!-- generated:peer:begin -->\nold\n<!-- generated:peer:end -->\nkeep 2\n";
        String out = RunAll.replaceBetweenMarkers(doc, "peer", "new table\n");
        assertThat(out).isEqualTo("# T\nkeep 1\n<!-- generated:peer:begin -->\nnew table\n"
                + "<!-- generated:peer:end -->\nkeep 2\n");
        assertThat(RunAll.replaceBetweenMarkers(doc, "jmh", "x")).isNull();
        assertThat(RunAll.replaceBetweenMarkers("<!-- generated:peer:end --><!-- generated:peer:begin -->", "peer",
                "x")).isNull();
    }
}

package dev.lattice.bench.jmh;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WorkloadTest {

    @Test
    void keysAreTheFormattedNumbers() {
        for (int i : new int[] {0, 1, 9, 10, 99_999, 1_234_567_890, Integer.MAX_VALUE}) {
            assertThat(Workload.key10(i)).isEqualTo(String.format("key%010d", i));
        }
        assertThat(new Workload(1000, 10).key(999)).isEqualTo("key0000000999");
    }

    @Test
    void distinctSetsHaveDistinctKeysAndRepeatWithTheSeed() {
        Workload w = new Workload(100, 10);
        List<String[]> a = w.distinctSets(64, 50, 7);
        assertThat(a).hasSize(50).allSatisfy(s -> assertThat(new HashSet<>(Arrays.asList(s))).hasSize(64));
        List<String[]> b = w.distinctSets(64, 50, 7);
        for (int i = 0; i < a.size(); i++) {
            assertThat(b.get(i)).containsExactly(a.get(i));
        }
        assertThatThrownBy(() -> w.distinctSets(101, 1, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1..100");
    }
}

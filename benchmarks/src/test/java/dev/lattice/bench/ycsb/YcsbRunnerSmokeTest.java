package dev.lattice.bench.ycsb;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Smoke test: the real YCSB client runs every core workload against Lattice on {@code memory:}. */
class YcsbRunnerSmokeTest {

    @Test
    void everyCoreWorkloadLoadsAndRunsWithoutErrors() {
        for (String w : YcsbRunner.WORKLOADS) {
            String storage = "ycsb-smoke-" + w;
            Properties p = YcsbRunner.workload(w);
            p.setProperty("db", LatticeYcsbClient.class.getName());
            p.setProperty("recordcount", "200");
            p.setProperty("operationcount", "300");
            p.setProperty("threadcount", "2");
            p.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, "memory:" + storage);
            try {
                YcsbRunner.Result r = YcsbRunner.run(p, m -> { });
                assertThat(r.load().operations()).as("workload %s load", w).isEqualTo(200);
                assertThat(r.load().ops()).containsKey("INSERT");
                assertThat(r.run().operations()).as("workload %s run", w).isEqualTo(300);
                assertThat(r.run().errors()).as("workload %s errors", w).isZero();
                assertThat(r.run().report()).contains("[OVERALL], Throughput(ops/sec)");
                assertThat(r.run().ops().values()).allSatisfy(s -> assertThat(s.p99Us()).isPositive());
            } finally {
                InMemoryStorage.dropNamed(storage);
            }
        }
    }

    @Test
    void unknownWorkloadIsRejected() {
        assertThatThrownBy(() -> YcsbRunner.workload("g")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[a, b, c, d, e, f]");
    }
}

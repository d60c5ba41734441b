package dev.lattice.engine;

import dev.lattice.spi.FencedException;
import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.lattice.engine.EngineBasicsTest.b;
import static dev.lattice.engine.EngineBasicsTest.open;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Fenced means closed (issue 14 item 5): once another process claimed a tree's log, the first process neither
 * serves reads nor takes writes; the periodic ownership check bounds how long a process that did not write serves
 * stale data. Two lattices on one in-memory storage stand for two processes sharing a backend.
 */
class OwnershipLossTest {

    @Test
    void anIdleOwnerStopsServingReadsWithinTheCheckInterval() {
        InMemoryStorage storage = new InMemoryStorage();
        Duration interval = Duration.ofMillis(200);
        Lattice a = open(storage, LatticeConfig.builder().partitions(4).ownershipCheckInterval(interval)
                .closeTimeout(Duration.ofSeconds(10)));
        try {
            Tree ta = a.tree("t");
            ta.put("k", b("v1"));
            assertThat(ta.get("k")).isPresent();
            try (Lattice other = open(storage, LatticeConfig.builder().ownershipCheckInterval(Duration.ZERO))) {
                long claimed = System.nanoTime();
                other.tree("t").put("k", b("v2")); // the other process takes the tree and writes
                long lostAfterMs = -1;
                while (System.nanoTime() - claimed < TimeUnit.SECONDS.toNanos(10)) {
                    try {
                        ta.get("k");
                    } catch (OwnershipLostException e) {
                        lostAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - claimed);
                        assertThat(e.tree()).isEqualTo("t");
                        assertThat(e.log().tree()).isEqualTo("t");
                        assertThat(e.epoch()).isGreaterThan(0);
                        assertThat(e).hasCauseInstanceOf(FencedException.class).hasMessageContaining("claimed by");
                        break;
                    }
                    sleep(5);
                }
                System.out.println("[ownership] idle owner stopped serving reads " + lostAfterMs
                        + " ms after the claim (interval " + interval.toMillis() + " ms)");
                // the bound: one interval, plus the timer's period and one provider call; generous for a noisy host
                assertThat(lostAfterMs).isBetween(0L, interval.toMillis() * 10);
            }
            assertThatThrownBy(() -> ta.getAll(java.util.List.of("k"))).isInstanceOf(OwnershipLostException.class);
            assertThatThrownBy(() -> ta.scan("", "~", false)).isInstanceOf(OwnershipLostException.class);
            assertThatThrownBy(ta::count).isInstanceOf(OwnershipLostException.class);
            assertThatThrownBy(() -> ta.put("k2", b("x"))).isInstanceOf(OwnershipLostException.class);
            assertThatThrownBy(() -> ta.putAllAtomic(java.util.Map.of("k3", b("x"), "k4", b("y"))))
                    .isInstanceOf(OwnershipLostException.class);
            assertThat(ta.healthIssues()).anySatisfy(i -> assertThat(i.kind())
                    .isEqualTo(HealthIssue.Kind.OWNERSHIP_LOST));
            assertThat(ta.saturation()).isEqualTo(SaturationState.SATURATED);
        } finally {
            long t0 = System.nanoTime();
            a.close();
            // a lost log has nothing to drain: close does not wait for the 10 s close timeout
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(5_000);
        }
        // the data of the new owner is intact
        try (Lattice c = open(storage)) {
            assertThat(c.tree("t").get("k")).hasValueSatisfying(v -> assertThat(v).isEqualTo(b("v2")));
        }
    }

    @Test
    void withoutTheCheckAWriteRevealsTheLossAndReadsStopToo() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage, LatticeConfig.builder().partitions(1).ownershipCheckInterval(Duration.ZERO)
                .maxRetries(0))) {
            Tree ta = a.tree("t");
            ta.put("k", b("v1"));
            try (Lattice other = open(storage, LatticeConfig.builder().ownershipCheckInterval(Duration.ZERO))) {
                other.tree("t").put("k", b("v2"));
            }
            assertThat(ta.get("k")).isPresent(); // nothing told this process yet (check disabled)
            assertThatThrownBy(() -> ta.put("k", b("v3"))).isInstanceOf(WriteFailedException.class)
                    .hasRootCauseInstanceOf(FencedException.class);
            assertThatThrownBy(() -> ta.get("k")).isInstanceOf(OwnershipLostException.class);
            assertThatThrownBy(() -> ta.put("k", b("v4"))).isInstanceOf(OwnershipLostException.class);
        }
    }

    @Test
    void anOwnerThatKeepsItsClaimKeepsServing() {
        InMemoryStorage storage = new InMemoryStorage();
        try (Lattice a = open(storage, LatticeConfig.builder().partitions(2)
                .ownershipCheckInterval(Duration.ofMillis(20)))) {
            Tree ta = a.tree("t");
            ta.put("k", b("v1"));
            sleep(300); // many checks on idle logs
            assertThat(ta.get("k")).isPresent();
            assertThat(ta.healthIssues()).isEmpty();
            assertThat(a.meterRegistry().find("lattice.ownership.lost").counter()).isNull();
        }
    }

    @Test
    void intervalIsValidated() {
        assertThatThrownBy(() -> LatticeConfig.builder().ownershipCheckInterval(Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ownershipCheckInterval");
        assertThatThrownBy(() -> LatticeConfig.builder().providerCallTimeout(Duration.ofHours(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("providerCallTimeout");
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}

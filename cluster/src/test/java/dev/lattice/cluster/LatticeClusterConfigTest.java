package dev.lattice.cluster;

import com.typesafe.config.ConfigFactory;
import dev.lattice.engine.LatticeConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The scan prepare hold setting: its default, its config key, its bounds and its check against the request timeout. */
class LatticeClusterConfigTest {

    private static final String URI = "postgres://127.0.0.1:1/none?user=x";

    private static LatticeClusterConfig.Builder node() {
        return LatticeClusterConfig.builder().lattice(LatticeConfig.builder().uri(URI));
    }

    @Test
    void scanPrepareHoldDefaultsTo100MillisAndIsReadFromItsKey() {
        assertThat(node().build().scanPrepareHold()).isEqualTo(Duration.ofMillis(100));
        LatticeClusterConfig c = LatticeClusterConfig.fromConfig(ConfigFactory.parseString(
                "lattice.cluster { provider = \"" + URI + "\", scan-prepare-hold = 250ms }")).build();
        assertThat(c.scanPrepareHold()).isEqualTo(Duration.ofMillis(250));
        assertThat(node().scanPrepareHold(Duration.ZERO).build().scanPrepareHold()).as("off").isZero();
    }

    @Test
    void scanPrepareHoldIsBoundedAndShorterThanTheRequestTimeout() {
        assertThatThrownBy(() -> node().scanPrepareHold(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0..5 s");
        assertThatThrownBy(() -> node().scanPrepareHold(Duration.ofSeconds(6)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0..5 s");
        assertThatThrownBy(() -> node().requestTimeout(Duration.ofMillis(300)).scanPrepareHold(Duration.ofMillis(300))
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shorter than requestTimeout");
        assertThat(node().requestTimeout(Duration.ofMillis(300)).scanPrepareHold(Duration.ofMillis(299)).build()
                .scanPrepareHold()).isEqualTo(Duration.ofMillis(299));
    }
}

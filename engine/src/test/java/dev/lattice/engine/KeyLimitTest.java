package dev.lattice.engine;

import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reads and writes refuse the same keys: the limit counts UTF-8 bytes, not characters, on both paths. */
class KeyLimitTest {

    @Test
    void utf8LengthMatchesTheEncoder() {
        for (String s : List.of("", "abc", "\u00e9t\u00e9", "\u6f22\u5b57", "a\ud83d\ude00b", "x\ud800y", "\udc00",
                "\ud83d")) {
            assertThat(KeyLimit.utf8Length(s)).as(s).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
        }
    }

    @Test
    void aKeyUnderTheLimitInCharactersButOverItInBytesIsRefusedByReadsAsByWrites() {
        try (Lattice l = Lattice.open(LatticeConfig.builder().partitions(1).maxKeyBytes(30)
                .provider(new InMemoryWalStorageProvider(new dev.lattice.spi.memory.InMemoryStorage()), true).build())) {
            Tree t = l.tree("keys");
            String atLimit = "\u6f22".repeat(10); // 10 characters, 30 bytes
            String over = "\u6f22".repeat(10) + "a"; // 11 characters, 31 bytes
            t.put(atLimit, new byte[] {1});
            assertThat(t.get(atLimit)).isPresent();
            String message = "key is 31 UTF-8 bytes, more than the limit of 30 bytes (LatticeConfig maxKeyBytes)";
            assertThatThrownBy(() -> t.put(over, new byte[] {1})).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(message);
            assertThatThrownBy(() -> t.get(over)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
            assertThatThrownBy(() -> t.getAll(List.of(atLimit, over))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(message);
            assertThatThrownBy(() -> t.exists("")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("key must not be empty");
            assertThatThrownBy(() -> t.get(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> t.get("b".repeat(31))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key is 31 UTF-8 bytes");
        }
    }
}

package dev.lattice.engine;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A value with the version of the write that wrote it. Versions are positive, increase with every committed write
 * of a key, and are unique per write within a tree (all keys of one atomic write carry its one version); a reopened
 * tree continues above the highest version it replayed. Version {@code 0} stands for "absent" in {@link Tree#putIfVersion}.
 *
 * @param value the value bytes (the caller must not modify them; they are shared with the engine's state)
 * @param version the version, {@code >= 1}
 * @param expiresAtMillis when the value expires (epoch ms on the writer's clock, see
 *     {@link LatticeConfig.Builder#clock}), {@code 0} when it never does
 */
public record Versioned(byte[] value, long version, long expiresAtMillis) {

    /**
     * Creates a versioned value.
     *
     * @param value the value bytes (the caller must not modify them; they are shared with the engine's state)
     * @param version the version, {@code >= 1}
     * @param expiresAtMillis when the value expires (epoch ms), {@code 0} when it never does
     * @throws NullPointerException if {@code value} is null
     */
    public Versioned {
        Objects.requireNonNull(value, "value");
    }

    /**
     * A value that never expires.
     *
     * @param value the value bytes (the caller must not modify them; they are shared with the engine's state)
     * @param version the version, {@code >= 1}
     * @throws NullPointerException if {@code value} is null
     */
    public Versioned(byte[] value, long version) {
        this(value, version, 0);
    }

    /**
     * When the value expires, if it was written with a time-to-live.
     *
     * @return the expiry instant (the writer's wall clock at write time plus the ttl), or empty when it never expires
     */
    public Optional<Instant> expiresAt() {
        return expiresAtMillis == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(expiresAtMillis));
    }

    /** @return true when the value carries an expiry at or before {@code nowMillis} */
    boolean expiredAt(long nowMillis) {
        return expiresAtMillis != 0 && expiresAtMillis <= nowMillis;
    }

    @Override
    public String toString() {
        return "Versioned[" + value.length + " bytes, v" + version
                + (expiresAtMillis != 0 ? ", expires " + expiresAt().get() : "") + "]";
    }
}

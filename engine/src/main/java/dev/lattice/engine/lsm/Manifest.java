package dev.lattice.engine.lsm;

import dev.lattice.spi.RunId;

import java.util.List;
import java.util.Objects;

/**
 * A partition's manifest (ARCHITECTURE.md 4.6, 5.3): the live runs per level, the log offset they cover, the version
 * clock, and the engine's other state that must survive (pending atomic writes), published as the log's checkpoint.
 * Small: it names runs, it does not hold data. Encoded by {@link ManifestCodec} (docs/wal-format.md "Manifest").
 *
 * @param throughOffset the last log offset whose writes the runs hold; replay starts after it
 * @param lastVersion the highest version given to a write so far (the clock restarts above it)
 * @param runs the live runs, level 0 newest first, then deeper levels in key order
 * @param engineState the engine's other state (e.g. the pending section of atomic writes), opaque here
 */
public record Manifest(long throughOffset, long lastVersion, List<RunRef> runs, byte[] engineState) {

    /**
     * One live run.
     *
     * @param id the run's id in the log's run store
     * @param level its level, 0 for flushed memtables
     * @param lengthBytes its length in bytes
     * @param meta its statistics (key range, entries, versions)
     */
    public record RunRef(RunId id, int level, long lengthBytes, RunMeta meta) {

        /**
         * Creates a reference.
         *
         * @param id the run's id in the log's run store
         * @param level its level, 0 for flushed memtables
         * @param lengthBytes its length in bytes
         * @param meta its statistics (key range, entries, versions)
         * @throws NullPointerException if {@code id} or {@code meta} is null
         * @throws IllegalArgumentException if {@code level} or {@code lengthBytes} is negative
         */
        public RunRef {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(meta, "meta");
            if (level < 0 || lengthBytes < 0) {
                throw new IllegalArgumentException("bad run reference: level " + level + ", " + lengthBytes + " bytes");
            }
        }
    }

    /**
     * Creates a manifest.
     *
     * @param throughOffset the last log offset whose writes the runs hold; replay starts after it
     * @param lastVersion the highest version given to a write so far (the clock restarts above it)
     * @param runs the live runs, level 0 newest first, then deeper levels in key order
     * @param engineState the engine's other state (e.g. the pending section of atomic writes), opaque here
     * @throws NullPointerException if {@code runs} or {@code engineState} is null
     */
    public Manifest {
        runs = List.copyOf(runs);
        Objects.requireNonNull(engineState, "engineState");
    }

    /**
     * Bytes of data the manifest's runs hold.
     *
     * @return the sum of their lengths
     */
    public long runBytes() {
        return runs.stream().mapToLong(RunRef::lengthBytes).sum();
    }
}

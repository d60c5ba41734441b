package dev.lattice.spi;

import java.util.Objects;

/**
 * What a run store knows of one run.
 *
 * @param id the run's id
 * @param lengthBytes its length in bytes
 * @param crc32c the CRC32C of its bytes (as {@code (int) CRC32C.getValue()}), computed by the provider while writing;
 *     a rewrite of the same id compares it to tell the same bytes from other bytes
 * @param complete false for the leftover of a write that failed or crashed: {@link RunStore#list} reports it so the
 *     engine can delete it, {@link RunStore#read} treats it as absent
 */
public record RunInfo(RunId id, long lengthBytes, int crc32c, boolean complete) {

    /**
     * Creates a record.
     *
     * @param id the run's id
     * @param lengthBytes its length in bytes
     * @param crc32c the CRC32C of its bytes (as {@code (int) CRC32C.getValue()}), computed by the provider while
     *     writing; a rewrite of the same id compares it to tell the same bytes from other bytes
     * @param complete false for the leftover of a write that failed or crashed: {@link RunStore#list} reports it so
     *     the engine can delete it, {@link RunStore#read} treats it as absent
     * @throws NullPointerException if {@code id} is null
     * @throws IllegalArgumentException if {@code lengthBytes} is negative
     */
    public RunInfo {
        Objects.requireNonNull(id, "id");
        if (lengthBytes < 0) {
            throw new IllegalArgumentException("negative run length " + lengthBytes);
        }
    }
}

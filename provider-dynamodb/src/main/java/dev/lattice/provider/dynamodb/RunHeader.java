package dev.lattice.provider.dynamodb;

import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;

/**
 * What a run's header item says (docs/providers/dynamodb.md, "Runs"): everything a read needs to find and check the
 * run's chunk items. Immutable.
 *
 * @param length the run's length in bytes
 * @param crc32c CRC32C of the whole run
 * @param chunks how many chunk items hold it ({@code ceil(length / chunkBytes)})
 * @param generation the write's random generation, the high bits of its chunks' sort keys
 * @param chunkBytes data bytes per chunk item (the last may hold fewer), 1 to
 *     {@value DynamoDbRunStore#MAX_CHUNK_BYTES}
 */
record RunHeader(long length, int crc32c, int chunks, long generation, int chunkBytes) {

    /**
     * @param id the run's id
     * @return the run's info (complete)
     */
    RunInfo info(RunId id) {
        return new RunInfo(id, length, crc32c, true);
    }

    /**
     * @param index a chunk index, 0 to {@code chunks - 1}
     * @return how many data bytes that chunk holds
     */
    int bytesOfChunk(int index) {
        return (int) Math.min(chunkBytes, length - (long) index * chunkBytes);
    }
}

package dev.lattice.provider.azure.tables;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.LogId;

/**
 * Partition and row keys of the table layout (see docs/providers/azure-tables.md). Offsets are zero-padded to 19
 * digits so that row keys sort like the numbers. Tree names only hold {@code [A-Za-z0-9._-]}, none of which the
 * service forbids in keys. Stateless.
 */
final class Keys {
    /** Row key of a log's head row. */
    static final String HEAD = "H";
    /** Exclusive upper bound just above the head row (no row key starts with 'I'). */
    static final String HEAD_END = "I";
    /** Prefix of data rows: {@code D<first>.<batch id>.<epoch>.<row>}. */
    static final String DATA = "D";
    /** Exclusive upper bound of every data row key. */
    static final String DATA_END = "E";
    /** Prefix of manifest rows: {@code M<last offset of the commit group>}. */
    static final String MANIFEST = "M";
    /** Exclusive upper bound of every manifest row key. */
    static final String MANIFEST_END = "N";
    /** Prefix of checkpoint index rows: {@code K<through + 1>}. */
    static final String CHECKPOINT_INDEX = "K";
    /** Exclusive upper bound of every checkpoint index row key. */
    static final String CHECKPOINT_INDEX_END = "L";

    private Keys() {
    }

    /** @return {@code L|<tree>|<partition, 4 digits>}: the partition holding the log's head, manifest and data */
    static String logPartition(LogId log) {
        return "L|" + log.tree() + "|" + String.format("%04d", log.partition());
    }

    /** @return the inclusive lower bound of the log partitions of a tree */
    static String treeLow(String tree) {
        return "L|" + tree + "|";
    }

    /** @return the exclusive upper bound of the log partitions of a tree */
    static String treeHigh(String tree) {
        return "L|" + tree + "|~";
    }

    /**
     * Parses a log partition key.
     *
     * @param partitionKey {@code L|<tree>|<partition>}
     * @return the log, or {@code null} when the key is not a log partition
     */
    static LogId parseLogPartition(String partitionKey) {
        if (!partitionKey.startsWith("L|")) {
            return null;
        }
        int bar = partitionKey.lastIndexOf('|');
        if (bar <= 2) {
            return null;
        }
        try {
            return new LogId(partitionKey.substring(2, bar), Integer.parseInt(partitionKey.substring(bar + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** @return {@code C|<tree>|<partition>|<generation>}: the partition holding one checkpoint's chunks */
    static String checkpointPartition(LogId log, String generation) {
        return "C|" + log.tree() + "|" + String.format("%04d", log.partition()) + "|" + generation;
    }

    /** @return the inclusive lower bound of a log's checkpoint partitions */
    static String checkpointPartitionsLow(LogId log) {
        return "C|" + log.tree() + "|" + String.format("%04d", log.partition()) + "|";
    }

    /** @return the exclusive upper bound of a log's checkpoint partitions */
    static String checkpointPartitionsHigh(LogId log) {
        return checkpointPartitionsLow(log) + "~";
    }

    /** @return {@code <n, 19 digits>} for {@code n >= 0} */
    static String offset(long n) {
        return String.format("%019d", n);
    }

    /** @return the first data row key of batches starting at {@code first} (inclusive bound) */
    static String dataFrom(long first) {
        return DATA + offset(first);
    }

    /** @return the exclusive upper bound of data rows of batches starting at or before {@code first} */
    static String dataThrough(long first) {
        return first == Long.MAX_VALUE ? DATA_END : DATA + offset(first + 1);
    }

    /** @return the common prefix of one staged batch's rows */
    static String dataBatchPrefix(long first, BatchId id, long epoch) {
        return DATA + offset(first) + "." + id + "." + offset(epoch) + ".";
    }

    /** @return the row key of row {@code index} of a staged batch */
    static String dataRow(long first, BatchId id, long epoch, int index) {
        return dataBatchPrefix(first, id, epoch) + String.format("%05d", index);
    }

    /** @return the manifest row key of a commit group ending at {@code last} */
    static String manifest(long last) {
        return MANIFEST + offset(last);
    }

    /**
     * @param through the checkpoint's through-offset, {@code >= -1}
     * @return the checkpoint index row key: {@code K} and {@code through + 1} as 20 unsigned digits (no overflow)
     */
    static String checkpointIndex(long through) {
        String digits = Long.toUnsignedString(through + 1);
        return CHECKPOINT_INDEX + "0".repeat(20 - digits.length()) + digits;
    }

    /** @return the exclusive upper bound of manifest rows of groups ending at or before {@code last} */
    static String manifestThrough(long last) {
        return last == Long.MAX_VALUE ? MANIFEST_END : manifest(last + 1);
    }

    /** @return the row key of chunk row {@code index} of a checkpoint */
    static String checkpointRow(int index) {
        return String.format("%06d", index);
    }

    /**
     * Quotes a string for an OData filter.
     *
     * @param s the value
     * @return {@code 's'} with single quotes doubled
     */
    static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    /** @return {@code PartitionKey eq '<pk>' and RowKey ge '<low>' and RowKey lt '<high>'} */
    static String rowRange(String partitionKey, String low, String high) {
        return "PartitionKey eq " + quote(partitionKey) + " and RowKey ge " + quote(low) + " and RowKey lt "
                + quote(high);
    }
}

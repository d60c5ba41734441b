package dev.lattice.provider.dynamodb;

import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;

import java.util.HashMap;
import java.util.Map;

/**
 * The table layout: key schema, partition-key forms and attribute names (docs/providers/dynamodb.md describes the
 * same). Attribute names are one or two letters because they count toward the 400 KB item limit.
 *
 * <p>Key schema: partition key {@value #PK} (string), sort key {@value #SK} (number).
 * <ul>
 *   <li>Log partition {@code [prefix|]<tree>/<partition>}: the head item at sort key {@value #HEAD_SK}, batch chunk
 *       items at sort key = offset of the chunk's last entry.</li>
 *   <li>Checkpoint partition {@code [prefix|]<tree>/<partition>/c}: chunk items at sort key
 *       {@code generation * 2^20 + chunk index}.</li>
 *   <li>Run index {@code [prefix|]<tree>/<partition>/r} (sort key 0): the set of the log's run ids; run partition
 *       {@code [prefix|]<tree>/<partition>/r/<run id>}: the header at sort key 0, chunk items at sort key
 *       {@code generation * 2^20 + chunk index} ({@link DynamoDbRunStore}).</li>
 *   <li>Tree item {@code [prefix|]#t/<tree>} (sort key 0): the set of the tree's partitions.</li>
 *   <li>Catalog item {@code [prefix|]#} (sort key 0): the set of tree names.</li>
 * </ul>
 * Tree names never contain {@code /}, {@code #} or {@code |}, so these forms never collide. Stateless.
 */
final class Layout {

    /** Partition key attribute (string). */
    static final String PK = "p";
    /** Sort key attribute (number). */
    static final String SK = "s";
    /** Sort key of a log's head item. */
    static final long HEAD_SK = -1;
    /** Sort key of the tree and catalog items. */
    static final long META_SK = 0;

    // Batch chunk items.
    /** Epoch of the writer that staged the chunk. */
    static final String EPOCH = "e";
    /** The batch id, 16 bytes. */
    static final String BATCH_ID = "b";
    /** First offset of the chunk's batch. */
    static final String BATCH_FIRST = "f";
    /** Last offset of the chunk's batch. */
    static final String BATCH_LAST = "l";
    /** First offset of the chunk (the sort key is its last). */
    static final String CHUNK_FIRST = "k";
    /** Index of the chunk in its batch, from 0. */
    static final String CHUNK_INDEX = "i";
    /** Number of chunks of the batch. */
    static final String CHUNK_COUNT = "c";
    /** Entry lengths, one unsigned varint per entry. */
    static final String LENGTHS = "z";
    /** The entries' payloads, concatenated; absent when they are all empty. */
    static final String DATA = "d";
    /** CRC32C over the chunk's offsets, batch id, lengths and data. */
    static final String CRC = "x";

    // Head items (EPOCH as above).
    /** Version: raised by claim, commit, checkpoint publish and delete, a trim beyond the tail ({@link Head}). */
    static final String VERSION = "v";
    /** Committed tail. */
    static final String TAIL = "t";
    /** Trim watermark. */
    static final String WATERMARK = "w";
    /** Retained committed entries. */
    static final String RETAINED_ENTRIES = "n";
    /** Retained committed payload bytes. */
    static final String RETAINED_BYTES = "r";
    /** Item bytes of the retained committed chunks. */
    static final String CHUNK_BYTES = "y";
    /** Committing epoch per offset range (binary, see {@link Segments}). */
    static final String SEGMENTS = "g";
    /** Checkpoint catalog (binary, see {@link CheckpointCatalog}). */
    static final String CHECKPOINTS = "ck";
    /** Generations of checkpoints being written (number set). */
    static final String PENDING_GENERATIONS = "pg";
    /** Generations of replaced or deleted checkpoints whose chunks may remain (number set). */
    static final String GARBAGE_GENERATIONS = "gg";
    /** 1 once the log is listed in its tree item and the catalog. */
    static final String REGISTERED = "rg";
    /** Number of commits that moved the tail (counter). */
    static final String COMMITS = "cm";
    /** Number of trims that moved the watermark (counter). */
    static final String TRIMS = "tm";

    // Tree and catalog items.
    /** Number set of a tree's partitions. */
    static final String PARTITIONS = "ps";
    /** String set of tree names. */
    static final String TREES = "ts";

    /** Checkpoint chunk index bits in the checkpoint sort key. */
    static final int CHECKPOINT_INDEX_BITS = 20;

    private final String prefix;

    /**
     * @param keyPrefix the provider's key prefix, empty for none
     */
    Layout(String keyPrefix) {
        this.prefix = keyPrefix.isEmpty() ? "" : keyPrefix + "|";
    }

    /** @return the partition key of a log's head and chunks */
    String logKey(LogId log) {
        return prefix + log.tree() + "/" + log.partition();
    }

    /** @return the partition key of a log's checkpoint chunks */
    String checkpointKey(LogId log) {
        return logKey(log) + "/c";
    }

    /** @return the partition key of a log's run index item (the set of its run ids) */
    String runIndexKey(LogId log) {
        return logKey(log) + "/r";
    }

    /** @return the partition key of one run's header and chunk items */
    String runKey(LogId log, RunId id) {
        return logKey(log) + "/r/" + id.value();
    }

    /** @return the partition key of a tree item */
    String treeKey(String tree) {
        return prefix + "#t/" + tree;
    }

    /** @return the partition key of the catalog item */
    String catalogKey() {
        return prefix + "#";
    }

    /** @return the key attributes of an item */
    static Map<String, AttributeValue> key(String pk, long sk) {
        return Map.of(PK, s(pk), SK, n(sk));
    }

    static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    static AttributeValue n(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }

    static AttributeValue b(byte[] v) {
        return AttributeValue.fromB(SdkBytes.fromByteArray(v));
    }

    /**
     * Reads a number attribute.
     *
     * @throws IllegalArgumentException if it is absent or not an integer
     */
    static long num(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        if (v == null || v.n() == null) {
            throw new IllegalArgumentException("attribute '" + name + "' is missing or not a number");
        }
        return Long.parseLong(v.n());
    }

    /** Reads a number attribute, with a default when absent. */
    static long num(Map<String, AttributeValue> item, String name, long absent) {
        AttributeValue v = item.get(name);
        return v == null || v.n() == null ? absent : Long.parseLong(v.n());
    }

    /** Reads a binary attribute, empty when absent. */
    static byte[] bin(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        return v == null || v.b() == null ? new byte[0] : v.b().asByteArray();
    }

    /**
     * A {@code Query} of a log partition's sort keys {@code lo..hi}, ascending.
     *
     * @param callerNames when true the caller sets the expression attribute names (which must map {@code #p} and
     *     {@code #s}), usually with a projection
     * @param limit items per page, 0 for none (the 1 MB page cap applies)
     */
    static QueryRequest.Builder rangeQuery(String pk, long lo, long hi, Map<String, AttributeValue> start,
                                           boolean callerNames, int limit) {
        QueryRequest.Builder q = QueryRequest.builder()
                .keyConditionExpression("#p = :p AND #s BETWEEN :lo AND :hi")
                .expressionAttributeValues(Map.of(":p", Layout.s(pk), ":lo", Layout.n(lo), ":hi", Layout.n(hi)))
                .scanIndexForward(true);
        if (!callerNames) {
            q.expressionAttributeNames(Map.of("#p", Layout.PK, "#s", Layout.SK));
        }
        if (start != null) {
            q.exclusiveStartKey(start);
        }
        if (limit > 0) {
            q.limit(limit);
        }
        return q;
    }

    /** @return the expression attribute names of {@link #METADATA_PROJECTION} */
    static Map<String, String> metadataNames() {
        Map<String, String> names = new HashMap<>();
        names.put("#p", Layout.PK);
        names.put("#s", Layout.SK);
        names.put("#k", Layout.CHUNK_FIRST);
        names.put("#e", Layout.EPOCH);
        names.put("#b", Layout.BATCH_ID);
        names.put("#f", Layout.BATCH_FIRST);
        names.put("#l", Layout.BATCH_LAST);
        names.put("#i", Layout.CHUNK_INDEX);
        names.put("#c", Layout.CHUNK_COUNT);
        names.put("#z", Layout.LENGTHS);
        names.put("#x", Layout.CRC);
        return names;
    }

    /** A projection of a chunk item's metadata (no entry data), names as in {@link #metadataNames()}. */
    static final String METADATA_PROJECTION = "#p, #s, #k, #e, #b, #f, #l, #i, #c, #z, #x";
}

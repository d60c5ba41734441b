package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import dev.lattice.provider.azure.tables.Records.CheckpointRef;
import dev.lattice.provider.azure.tables.Records.Head;
import dev.lattice.provider.azure.tables.TablesCalls.TxFailure;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.support.VerifyingChunkStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Protocol part: the checkpoint store. A checkpoint's bytes are chunk rows in a partition of their own (one
 * partition per generation), written before anything points at them; one conditional head update plus an index row
 * publishes it, so a reader sees the old or the new checkpoint. A replaced checkpoint's chunks are deleted after the
 * flip; reconcile sweeps what a crash left. Reads go through {@link VerifyingChunkStream}. See
 * docs/providers/azure-tables.md.
 *
 * <p>Thread-safe.
 */
final class TablesCheckpointStore implements CheckpointStore {

    private static final int QUERY_TOP = TablesCalls.QUERY_TOP;
    private static final int MAX_HEAD_RACES = TablesCalls.MAX_HEAD_RACES;
    private static final long MAX_CHECKPOINT_BYTES = AzureTablesWalStorageProvider.MAX_CHECKPOINT_BYTES;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final TablesCalls calls;
    private final Layout layout;
    private final int rowsPerTransaction;
    private final Runnable ensureOpen;

    /**
     * @param calls the backend calls
     * @param layout how bytes are spread over properties and rows
     * @param ensureOpen throws {@link IllegalStateException} when the provider is closed
     */
    TablesCheckpointStore(TablesCalls calls, Layout layout, Runnable ensureOpen) {
        this.calls = calls;
        this.layout = layout;
        this.rowsPerTransaction = rowsPerTransaction(layout);
        this.ensureOpen = ensureOpen;
    }

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion,
                                  InputStream data) {
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        ensureOpen.run();
        Head head = calls.readHead(log);
        TablesCalls.checkFence(log, head, fence);
        checkCheckpointOffsets(log, head, throughOffset);
        String generation = HexFormat.of().formatHex(randomBytes(16));
        String cpk = Keys.checkpointPartition(log, generation);
        MessageDigest sha = sha256();
        byte[] buf = new byte[rowsPerTransaction * layout.rowBytes()];
        long total = 0;
        int rowIndex = 0;
        try {
            while (true) {
                int n = readFully(data, buf);
                if (total + n > MAX_CHECKPOINT_BYTES) {
                    throw new CheckpointTooLargeException(log, MAX_CHECKPOINT_BYTES);
                }
                if (n > 0) {
                    sha.update(buf, 0, n);
                    List<TableEntity> rows = new ArrayList<>();
                    for (int off = 0; off < n; off += layout.rowBytes()) {
                        TableEntity row = new TableEntity(cpk, Keys.checkpointRow(rowIndex)).addProperty("X",
                                rowIndex).addProperty("E", fence.epoch());
                        Rows.putPayload(row, buf, off, Math.min(layout.rowBytes(), n - off), layout);
                        rows.add(row);
                        rowIndex++;
                    }
                    for (List<TableTransactionAction> txn : Rows.pack(rows, TableTransactionActionType.CREATE)) {
                        TxFailure f = calls.submit(log, "checkpoint publish", txn);
                        if (f != null) {
                            throw f.toException(log, "checkpoint publish");
                        }
                    }
                    total += n;
                }
                if (n < buf.length) {
                    break;
                }
            }
        } catch (IOException e) {
            discard(log, cpk);
            throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published", e);
        } catch (RuntimeException e) {
            discard(log, cpk);
            throw e;
        }
        CheckpointRef ref = new CheckpointRef(generation, throughOffset, formatVersion, total, fence.epoch(),
                sha.digest(), rowIndex);
        String pk = Keys.logPartition(log);
        CheckpointRef replaced = null;
        for (int attempt = 1; ; attempt++) {
            Head now = calls.readHead(log);
            try {
                TablesCalls.checkFence(log, now, fence);
                checkCheckpointOffsets(log, now, throughOffset);
            } catch (RuntimeException e) {
                discard(log, cpk);
                throw e;
            }
            TableEntity index = new TableEntity(pk, Keys.checkpointIndex(throughOffset));
            ref.writeTo(index);
            TxFailure f = calls.submit(log, "checkpoint publish", List.of(
                    new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE,
                            now.withLatest(ref).toEntity(pk), true),
                    new TableTransactionAction(TableTransactionActionType.UPSERT_REPLACE, index)));
            if (f == null) {
                replaced = now.latest();
                break;
            }
            if (!f.isConflict()) {
                throw f.toException(log, "checkpoint publish");
            }
            Head after = calls.readHead(log);
            if (after.latest() != null && after.latest().generation().equals(generation)) {
                replaced = now.latest(); // a retried request had landed
                break;
            }
            if (after.epoch() != fence.epoch()) {
                discard(log, cpk);
                throw new FencedException(log, fence.epoch(), after.epoch(), f.cause());
            }
            calls.backOff(log, "checkpoint publish", attempt, f);
        }
        if (replaced != null && replaced.through() == throughOffset) {
            discard(log, Keys.checkpointPartition(log, replaced.generation()));
        }
        return ref.info();
    }

    private void checkCheckpointOffsets(LogId log, Head head, long through) {
        if (through > head.tail()) {
            throw new OffsetConflictException(log, "checkpoint through " + through
                    + " is above the committed tail " + head.tail());
        }
        if (head.latest() != null && through < head.latest().through()) {
            throw new OffsetConflictException(log, "checkpoint through " + through
                    + " is below the latest checkpoint's " + head.latest().through());
        }
    }

    /** Deletes a checkpoint's chunk partition, best effort (reconcile sweeps what is left). */
    private void discard(LogId log, String cpk) {
        try {
            calls.deletePartition(log, "discarding checkpoint chunks", cpk);
        } catch (WalStorageException ignored) {
            // left for reconcile's sweep
        }
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        Objects.requireNonNull(log, "log");
        ensureOpen.run();
        Head head = calls.readHead(log);
        return head == null || head.latest() == null ? Optional.empty() : Optional.of(head.latest().info());
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(info, "info");
        ensureOpen.run();
        TableEntity row;
        try {
            row = calls.table().get(Keys.logPartition(log), Keys.checkpointIndex(info.throughOffset()));
        } catch (RuntimeException e) {
            throw TablesCalls.failure(log, "opening checkpoint " + info.throughOffset(), e);
        }
        CheckpointRef ref = row == null ? null : CheckpointRef.readFrom(row);
        if (ref == null || !ref.info().equals(info)) {
            throw new WalStorageException(log, "checkpoint through " + info.throughOffset()
                    + " no longer exists (deleted or replaced)");
        }
        return stream(log, ref);
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        Objects.requireNonNull(log, "log");
        ensureOpen.run();
        Head head = calls.readHead(log);
        if (head == null || head.latest() == null) {
            return;
        }
        long keepFrom = Math.min(throughOffsetExclusive, head.latest().through());
        if (keepFrom <= -1) {
            return;
        }
        String pk = Keys.logPartition(log);
        List<CheckpointRef> doomed = new ArrayList<>();
        calls.queryAll(log, "deleting checkpoints", Keys.rowRange(pk, Keys.CHECKPOINT_INDEX,
                Keys.checkpointIndex(keepFrom)), null, QUERY_TOP, e -> {
                    CheckpointRef ref = CheckpointRef.readFrom(e);
                    if (ref != null && !ref.generation().equals(head.latest().generation())) {
                        doomed.add(ref);
                    }
                    return true;
                });
        for (CheckpointRef ref : doomed) {
            calls.deleteRows(log, "deleting checkpoints", pk, List.of(Keys.checkpointIndex(ref.through())));
            calls.deletePartition(log, "deleting checkpoints", Keys.checkpointPartition(log, ref.generation()));
        }
    }

    /**
     * A stream over a checkpoint's chunk rows, fetched {@code rowsPerTransaction} rows per query; the length is checked
     * by {@link VerifyingChunkStream}, the SHA-256 of the whole once the last chunk arrives (before it is delivered).
     */
    private InputStream stream(LogId log, CheckpointRef ref) {
        String cpk = Keys.checkpointPartition(log, ref.generation());
        MessageDigest sha = sha256();
        int chunks = (ref.rows() + rowsPerTransaction - 1) / rowsPerTransaction;
        if (chunks == 0) {
            checkDigest(log, ref, sha, 0);
        }
        long[] served = {0};
        VerifyingChunkStream.ChunkSource source = index -> {
            int nextRow = index * rowsPerTransaction;
            int want = Math.min(rowsPerTransaction, ref.rows() - nextRow);
            List<TableEntity> rows = new ArrayList<>();
            calls.queryAll(log, "reading checkpoint " + ref.through(), Keys.rowRange(cpk,
                    Keys.checkpointRow(nextRow), Keys.checkpointRow(nextRow + want)), null, want, e -> {
                        rows.add(e);
                        return rows.size() < want;
                    });
            if (rows.size() != want) {
                throw new WalStorageException(log, "checkpoint through " + ref.through() + " lost chunk rows "
                        + nextRow + ".." + (nextRow + want - 1) + " (deleted meanwhile?)");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int row = nextRow;
            for (TableEntity e : rows) {
                try {
                    if (Rows.getInt(e, "X") != row) {
                        throw new CorruptLogException(log, ref.through(), "checkpoint chunk rows out of order");
                    }
                    Rows.appendPayload(e, out);
                } catch (IllegalStateException ex) {
                    throw new CorruptLogException(log, ref.through(), ex.getMessage(), ex);
                }
                row++;
            }
            byte[] chunk = out.toByteArray();
            sha.update(chunk);
            served[0] += chunk.length;
            if (index == chunks - 1) {
                checkDigest(log, ref, sha, served[0]);
            }
            return chunk;
        };
        return VerifyingChunkStream.checkpoint(log, ref.info(), chunks, source);
    }

    private static void checkDigest(LogId log, CheckpointRef ref, MessageDigest sha, long served) {
        if (served != ref.size() || !Arrays.equals(sha.digest(), ref.sha256())) {
            throw new CorruptLogException(log, ref.through(), "checkpoint through " + ref.through() + " read "
                    + served + " bytes that fail its length (" + ref.size() + ") or SHA-256 check");
        }
    }

    /** How many full rows fit one transaction under the service's limits (3 for the default layout). */
    static int rowsPerTransaction(Layout layout) {
        TableEntity sample = new TableEntity(Keys.checkpointPartition(new LogId("x".repeat(LogId.MAX_TREE_NAME_LENGTH),
                LogId.MAX_PARTITION), "0".repeat(32)), Keys.checkpointRow(0)).addProperty("X", 0)
                .addProperty("E", Long.MAX_VALUE);
        Rows.putPayload(sample, new byte[layout.rowBytes()], 0, layout.rowBytes(), layout);
        Rows.checkEntity(sample);
        long perRow = AzureTableLimits.actionRequestBytes(sample.getPartitionKey(), sample.getRowKey(),
                sample.getProperties());
        long budget = AzureTableLimits.MAX_TRANSACTION_PAYLOAD_BYTES - AzureTableLimits.TRANSACTION_OVERHEAD_BYTES;
        return (int) Math.max(1, Math.min(AzureTableLimits.MAX_TRANSACTION_ACTIONS, budget / perRow));
    }

    private static int readFully(InputStream in, byte[] buf) throws IOException {
        int n = 0;
        while (n < buf.length) {
            int r = in.read(buf, n, buf.length - n);
            if (r < 0) {
                break;
            }
            n += r;
        }
        return n;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}

package dev.lattice.engine.lsm;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Encodes and decodes a {@link Manifest} as checkpoint format {@value #FORMAT} (docs/wal-format.md "Manifest"):
 * magic, format, fields, CRC32C of everything before it. Stateless, thread-safe.
 */
public final class ManifestCodec {

    /** The checkpoint format number of a manifest (formats 1 and 2 are whole-partition snapshots). */
    public static final int FORMAT = 3;
    /**
     * The encoding this code writes inside a manifest checkpoint: 4 adds each run's range tombstones after its meta
     * (encoding 3, written before range deletes existed, is still read). The checkpoint format stays {@link #FORMAT}.
     */
    public static final int ENCODING = 4;
    private static final int MAGIC = 0x4C4D414E; // "LMAN"

    private ManifestCodec() {
    }

    /**
     * Encodes a manifest.
     *
     * @param m the manifest
     * @return its bytes
     */
    public static byte[] encode(Manifest m) {
        RunFormat.ByteSink out = new RunFormat.ByteSink(256 + m.runs().size() * 96 + m.engineState().length);
        out.writeInt(MAGIC);
        out.writeInt(ENCODING);
        out.writeLong(m.throughOffset());
        out.writeLong(m.lastVersion());
        RunFormat.putVarLong(out, m.runs().size());
        for (Manifest.RunRef r : m.runs()) {
            byte[] id = r.id().value().getBytes(StandardCharsets.US_ASCII);
            RunFormat.putVarLong(out, id.length);
            out.write(id, 0, id.length);
            RunFormat.putVarLong(out, r.level());
            RunFormat.putVarLong(out, r.lengthBytes());
            RunMetaCodec.encode(r.meta(), out);
            RunMetaCodec.encodeRanges(r.meta(), out);
        }
        RunFormat.putVarLong(out, m.engineState().length);
        out.write(m.engineState(), 0, m.engineState().length);
        CRC32C crc = new CRC32C();
        crc.update(out.array(), 0, out.size());
        out.writeInt((int) crc.getValue());
        return Arrays.copyOf(out.array(), out.size());
    }

    /**
     * Decodes a manifest.
     *
     * @param log the log it belongs to, for errors
     * @param offset the checkpoint's through offset, for errors
     * @param bytes its bytes
     * @return the manifest
     * @throws CorruptLogException if the bytes fail their checksum, have another format, or cannot be decoded
     */
    public static Manifest decode(LogId log, long offset, byte[] bytes) {
        if (bytes.length < 28) {
            throw new CorruptLogException(log, offset, "manifest of " + bytes.length + " bytes is too short");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        if ((int) crc.getValue() != in.getInt(bytes.length - 4)) {
            throw new CorruptLogException(log, offset, "manifest fails its CRC32C check");
        }
        if (in.getInt() != MAGIC) {
            throw new CorruptLogException(log, offset, "not a manifest (magic)");
        }
        int format = in.getInt();
        if (format != FORMAT && format != ENCODING) {
            throw new CorruptLogException(log, offset, "manifest format " + format + " is not readable by this "
                    + "release (reads " + FORMAT + " and " + ENCODING + ")");
        }
        try {
            long through = in.getLong();
            long lastVersion = in.getLong();
            int n = RunFormat.getVarInt(in);
            List<Manifest.RunRef> runs = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte[] id = new byte[RunFormat.getVarInt(in)];
                in.get(id);
                int level = RunFormat.getVarInt(in);
                long length = RunFormat.getVarLong(in);
                RunMeta meta = format >= ENCODING ? RunMetaCodec.decodeWithRanges(in) : RunMetaCodec.decode(in);
                runs.add(new Manifest.RunRef(new RunId(new String(id, StandardCharsets.US_ASCII)), level, length, meta));
            }
            byte[] state = new byte[RunFormat.getVarInt(in)];
            in.get(state);
            if (in.remaining() != 4) {
                throw new IllegalStateException(in.remaining() - 4 + " bytes after the last field");
            }
            return new Manifest(through, lastVersion, runs, state);
        } catch (RuntimeException e) {
            throw new CorruptLogException(log, offset, "cannot decode the manifest: " + e.getMessage(), e);
        }
    }
}

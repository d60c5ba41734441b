package dev.lattice.engine.lsm;

import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes data in earlier formats (before range deletes and time-to-live; before blocked filters),
 * for compatibility tests.
 */
public final class LegacyRuns {

    private LegacyRuns() {
    }

    /**
     * A run of format 1 (what releases before run format 2 wrote).
     *
     * @param entries in run order, without expiries
     * @return the run and its meta
     */
    public static RunWriter.Finished runV1(List<RunEntry> entries) {
        RunWriter w = new RunWriter(1024, 10, 1 << 16, RunFormat.VERSION_1);
        entries.forEach(w::add);
        return w.finish();
    }

    /**
     * A manifest of encoding 3 (without the range sections).
     *
     * @param m the manifest (its runs must have no range tombstones)
     * @return its bytes
     */
    public static byte[] manifestV3(Manifest m) {
        RunFormat.ByteSink out = new RunFormat.ByteSink(1024);
        out.writeInt(0x4C4D414E);
        out.writeInt(3);
        out.writeLong(m.throughOffset());
        out.writeLong(m.lastVersion());
        RunFormat.putVarLong(out, m.runs().size());
        for (Manifest.RunRef r : m.runs()) {
            if (!r.meta().ranges().isEmpty()) {
                throw new IllegalArgumentException("encoding 3 has no range tombstones");
            }
            byte[] id = r.id().value().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            RunFormat.putVarLong(out, id.length);
            out.write(id, 0, id.length);
            RunFormat.putVarLong(out, r.level());
            RunFormat.putVarLong(out, r.lengthBytes());
            RunMetaCodec.encode(r.meta(), out);
        }
        RunFormat.putVarLong(out, m.engineState().length);
        out.write(m.engineState(), 0, m.engineState().length);
        CRC32C crc = new CRC32C();
        crc.update(out.array(), 0, out.size());
        out.writeInt((int) crc.getValue());
        return Arrays.copyOf(out.array(), out.size());
    }
}

package dev.lattice.engine.lsm;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Encodes and decodes {@link RunMeta} (the meta block, and a run's record in a manifest). Stateless, thread-safe. */
final class RunMetaCodec {

    private RunMetaCodec() {
    }

    static void encode(RunMeta m, RunFormat.ByteSink out) {
        RunFormat.putVarLong(out, m.entries());
        RunFormat.putVarLong(out, m.tombstones());
        RunFormat.putVarLong(out, m.minVersion() + 1);
        RunFormat.putVarLong(out, m.maxVersion() + 1);
        string(out, m.firstKey());
        string(out, m.lastKey());
        RunFormat.putVarLong(out, m.userBytes());
        RunFormat.putVarLong(out, m.blocks());
    }

    private static void string(RunFormat.ByteSink out, String s) {
        if (s == null) {
            RunFormat.putVarLong(out, 0);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        RunFormat.putVarLong(out, b.length + 1L);
        out.write(b, 0, b.length);
    }

    static RunMeta decode(ByteBuffer in) {
        long entries = RunFormat.getVarLong(in);
        long tombstones = RunFormat.getVarLong(in);
        long minVersion = RunFormat.getVarLong(in) - 1;
        long maxVersion = RunFormat.getVarLong(in) - 1;
        String first = string(in);
        String last = string(in);
        long userBytes = RunFormat.getVarLong(in);
        int blocks = RunFormat.getVarInt(in);
        return new RunMeta(entries, tombstones, minVersion, maxVersion, first, last, userBytes, blocks);
    }

    private static String string(ByteBuffer in) {
        int n = RunFormat.getVarInt(in);
        if (n == 0) {
            return null;
        }
        byte[] b = new byte[n - 1];
        in.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }
}

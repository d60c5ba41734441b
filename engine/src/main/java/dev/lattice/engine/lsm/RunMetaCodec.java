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

    /** The range tombstone section of run format 2 and manifest encoding 4: n, then (from, to, version) each. */
    static void encodeRanges(RunMeta m, RunFormat.ByteSink out) {
        RunFormat.putVarLong(out, m.ranges().size());
        for (RangeTombstone r : m.ranges()) {
            string(out, r.from());
            string(out, r.to());
            RunFormat.putVarLong(out, r.version());
        }
    }

    /** Decodes a meta block with its range section (format 2). */
    static RunMeta decodeWithRanges(ByteBuffer in) {
        RunMeta m = decode(in);
        int n = RunFormat.getVarInt(in);
        java.util.List<RangeTombstone> ranges = new java.util.ArrayList<>(Math.min(n, 1024));
        for (int i = 0; i < n; i++) {
            String from = string(in);
            String to = string(in);
            ranges.add(new RangeTombstone(from, to, RunFormat.getVarLong(in)));
        }
        return new RunMeta(m.entries(), m.tombstones(), m.minVersion(), m.maxVersion(), m.firstKey(), m.lastKey(),
                m.userBytes(), m.blocks(), ranges);
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

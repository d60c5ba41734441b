package dev.lattice.engine.lsm;

import dev.lattice.spi.CorruptRunException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RunFormatTest {

    private static final LogId LOG = new LogId("runs", 3);

    /** key -> versions newest first. */
    private static TreeMap<String, List<RunEntry>> model(long seed, int keys) {
        Random rnd = new Random(seed);
        TreeMap<String, List<RunEntry>> m = new TreeMap<>();
        long version = 1_000_000;
        for (int i = 0; i < keys; i++) {
            String key = "user" + String.format("%08d", rnd.nextInt(keys * 4)) + (rnd.nextInt(5) == 0 ? "\u00e9\u4e2d" : "");
            List<RunEntry> versions = m.computeIfAbsent(key, k -> new ArrayList<>());
            int n = 1 + (rnd.nextInt(8) == 0 ? rnd.nextInt(40) : 0);
            for (int v = 0; v < n; v++) {
                version -= 1 + rnd.nextInt(3);
                byte[] value = new byte[rnd.nextInt(300)];
                rnd.nextBytes(value);
                versions.add(rnd.nextInt(6) == 0 ? RunEntry.delete(key, version) : RunEntry.put(key, version, value));
            }
        }
        for (List<RunEntry> l : m.values()) {
            l.sort((a, b) -> Long.compare(b.version(), a.version()));
        }
        return m;
    }

    private static RunWriter.Finished write(TreeMap<String, List<RunEntry>> m, int blockBytes) {
        RunWriter w = new RunWriter(blockBytes, 10);
        m.values().forEach(l -> l.forEach(w::add));
        return w.finish();
    }

    private record Stored(RunStore store, RunSource source, AtomicInteger reads) {
    }

    private static Stored store(byte[] bytes) {
        InMemoryWalStorageProvider p = InMemoryWalStorageProvider.fresh();
        Fence f = p.claim(LOG);
        RunId id = new RunId("L0-000001");
        p.runs().write(LOG, f, id, new ByteArrayInputStream(bytes), bytes.length);
        AtomicInteger reads = new AtomicInteger();
        RunSource base = RunSource.of(p.runs(), LOG, id, bytes.length);
        RunSource counting = new RunSource() {
            public LogId log() { return LOG; }
            public RunId id() { return id; }
            public long length() { return bytes.length; }
            public int read(long position, byte[] dst, int off, int len) {
                reads.incrementAndGet();
                return base.read(position, dst, off, len);
            }
        };
        return new Stored(p.runs(), counting, reads);
    }

    /** A run of several chunks: no chunk reaches G1's humongous size, and the stream gives exactly its bytes. */
    @Test
    void aLargeRunIsHeldInSmallChunksAndStreamsBackWhole() throws Exception {
        TreeMap<String, List<RunEntry>> m = new TreeMap<>();
        Random rnd = new Random(3);
        for (int i = 0; i < 3_000; i++) {
            byte[] v = new byte[1_000];
            rnd.nextBytes(v);
            String k = String.format("k%06d", i);
            m.put(k, List.of(RunEntry.put(k, 10 + i, v)));
        }
        RunWriter.Finished run = write(m, 4096);
        assertThat(run.length()).isGreaterThan(2 * RunWriter.CHUNK_BYTES);
        assertThat(run.chunks()).hasSizeGreaterThan(2)
                .allSatisfy(c -> assertThat(c.length).isLessThanOrEqualTo(RunWriter.CHUNK_BYTES));
        byte[] whole = run.bytes();
        assertThat(whole).hasSize(run.length());
        assertThat(run.stream().readAllBytes()).isEqualTo(whole);
        java.io.InputStream in = run.stream(); // odd-sized reads across chunk ends
        java.io.ByteArrayOutputStream back = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[7_777];
        for (int n; (n = in.read(buf, 0, buf.length)) > 0; ) {
            back.write(buf, 0, n);
        }
        assertThat(in.read()).isEqualTo(-1);
        assertThat(back.toByteArray()).isEqualTo(whole);
        RunReader r = RunReader.open(store(whole).source(), new BlockCache(1 << 20));
        assertThat(r.meta().entries()).isEqualTo(3_000);
        for (Map.Entry<String, List<RunEntry>> e : m.entrySet()) {
            assertEntry(r.get(e.getKey(), Long.MAX_VALUE), e.getValue().get(0));
        }
    }

    @Test
    void everyVersionOfEveryKeyReadsBackByGetAndByScan() {
        for (int blockBytes : new int[] {256, 4096, 65536}) {
            TreeMap<String, List<RunEntry>> m = model(blockBytes, 3000);
            RunWriter.Finished run = write(m, blockBytes);
            RunReader r = RunReader.open(store(run.bytes()).source(), new BlockCache(1 << 20));
            long entries = m.values().stream().mapToLong(List::size).sum();
            assertThat(r.meta().entries()).as("entries in the meta block").isEqualTo(entries);
            assertThat(r.meta().firstKey()).isEqualTo(m.firstKey());
            assertThat(r.meta().lastKey()).isEqualTo(m.lastKey());
            for (Map.Entry<String, List<RunEntry>> e : m.entrySet()) {
                List<RunEntry> versions = e.getValue();
                assertEntry(r.get(e.getKey(), Long.MAX_VALUE), versions.get(0));
                RunEntry oldest = versions.get(versions.size() - 1);
                assertEntry(r.get(e.getKey(), oldest.version()), oldest);
                assertThat(r.get(e.getKey(), oldest.version() - 1)).as("no version below the oldest").isNull();
                if (versions.size() > 2) {
                    RunEntry mid = versions.get(versions.size() / 2);
                    assertEntry(r.get(e.getKey(), mid.version()), mid);
                }
            }
            List<RunEntry> all = new ArrayList<>();
            r.scan(null, null).forEachRemaining(all::add);
            assertThat(all).hasSize((int) entries);
            String from = m.keySet().stream().skip(m.size() / 3).findFirst().orElseThrow();
            String to = m.keySet().stream().skip(2L * m.size() / 3).findFirst().orElseThrow();
            Iterator<RunEntry> it = r.scan(from, to);
            long expected = m.subMap(from, true, to, false).values().stream().mapToLong(List::size).sum();
            long n = 0;
            String prev = null;
            while (it.hasNext()) {
                RunEntry e = it.next();
                assertThat(e.key()).isGreaterThanOrEqualTo(from).isLessThan(to);
                if (prev != null) {
                    assertThat(e.key()).isGreaterThanOrEqualTo(prev);
                }
                prev = e.key();
                n++;
            }
            assertThat(n).as("entries scanned in [%s, %s) with %d-byte blocks", from, to, blockBytes).isEqualTo(expected);
        }
    }

    @Test
    void getsThroughAFullCacheReadUncachedBlocksIntoScratchAndStillReturnEveryVersion() {
        for (int blockBytes : new int[] {256, 4096}) {
            TreeMap<String, List<RunEntry>> m1 = model(blockBytes + 1, 3000);
            TreeMap<String, List<RunEntry>> m2 = model(blockBytes + 2, 3000);
            BlockCache cache = new BlockCache(16 << 10); // a few blocks: full after the first scan
            RunReader r1 = RunReader.open(store(write(m1, blockBytes).bytes()).source(), cache);
            RunReader r2 = RunReader.open(store(write(m2, blockBytes).bytes()).source(), cache);
            r1.scan(null, null).forEachRemaining(e -> { });
            r2.scan(null, null).forEachRemaining(e -> { });
            Iterator<Map.Entry<String, List<RunEntry>>> i2 = m2.entrySet().iterator();
            for (Map.Entry<String, List<RunEntry>> e : m1.entrySet()) { // alternate readers: one scratch array
                List<RunEntry> v1 = e.getValue();
                RunEntry oldest = v1.get(v1.size() - 1);
                RunEntry got = r1.get(e.getKey(), oldest.version()); // may walk to the next block
                if (!i2.hasNext()) {
                    i2 = m2.entrySet().iterator();
                }
                Map.Entry<String, List<RunEntry>> f = i2.next();
                RunEntry other = r2.get(f.getKey(), Long.MAX_VALUE);
                assertEntry(got, oldest);
                assertEntry(other, f.getValue().get(0));
                assertEntry(r1.get(e.getKey(), Long.MAX_VALUE), v1.get(0));
            }
            assertThat(cache.sizeBytes()).as("the cache stays within its bound").isLessThanOrEqualTo(16 << 10);
        }
    }

    @Test
    void theSampledBlockIndexFindsEveryKeyAndNoAbsentOneAtEveryBlockCount() {
        for (int keys : new int[] {1, 2, 63, 64, 65, 127, 128, 129, 200, 1_000}) {
            RunWriter w = new RunWriter(256, 10); // 300-byte values: one entry per block
            List<String> all = new ArrayList<>();
            for (int i = 0; i < keys; i++) {
                String k = String.format("k%06d", i * 2 + 1);
                all.add(k);
                w.add(RunEntry.put(k, 10, new byte[300]));
            }
            RunReader r = RunReader.open(store(w.finish().bytes()).source(), new BlockCache(0));
            for (int i = 0; i < keys; i++) {
                assertThat(r.get(all.get(i), Long.MAX_VALUE)).as("%d blocks: %s", keys, all.get(i)).isNotNull();
                assertThat(r.get(String.format("k%06d", i * 2), Long.MAX_VALUE)).as("%d blocks: below %s", keys,
                        all.get(i)).isNull();
                assertThat(r.get(all.get(i) + "0", Long.MAX_VALUE)).isNull();
            }
            assertThat(r.get("k999999", Long.MAX_VALUE)).isNull();
            for (int i = 0; i < keys; i += Math.max(1, keys / 17)) { // a scan from each sampled stretch
                List<String> got = new ArrayList<>();
                r.scan(String.format("k%06d", i * 2), null).forEachRemaining(e -> got.add(e.key()));
                assertThat(got).as("%d blocks, scan from key %d", keys, i).isEqualTo(all.subList(i, keys));
            }
        }
    }

    private static void assertEntry(RunEntry actual, RunEntry expected) {
        assertThat(actual).as("entry for %s", expected).isNotNull();
        assertThat(actual.key()).isEqualTo(expected.key());
        assertThat(actual.version()).isEqualTo(expected.version());
        assertThat(actual.tombstone()).isEqualTo(expected.tombstone());
        assertThat(actual.value()).isEqualTo(expected.value());
    }

    @Test
    void absentKeysAreMostlyAnsweredByTheBloomFilterWithoutReadingABlock() {
        TreeMap<String, List<RunEntry>> m = model(7, 5000);
        RunWriter.Finished run = write(m, 4096);
        Stored s = store(run.bytes());
        RunReader r = RunReader.open(s.source(), new BlockCache(0));
        int opened = s.reads().get();
        int probes = 20_000;
        for (int i = 0; i < probes; i++) {
            assertThat(r.get("user" + String.format("%08d", i) + "x", Long.MAX_VALUE)).isNull();
        }
        double perGet = (s.reads().get() - opened) / (double) probes;
        assertThat(perGet).as("block reads per get of an absent key (10 bits per key)").isLessThan(0.03);
    }

    private static int footerVersion(byte[] run) {
        return java.nio.ByteBuffer.wrap(run, run.length - RunFormat.FOOTER_BYTES + 8, 4).getInt();
    }

    /** The run with its footer's version set to {@code version} and the footer's CRC32C made good again. */
    private static byte[] withFooterVersion(byte[] run, int version) {
        byte[] b = run.clone();
        int at = b.length - RunFormat.FOOTER_BYTES;
        java.nio.ByteBuffer.wrap(b).putInt(at + 8, version);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(b, at, RunFormat.FOOTER_BYTES - 4);
        java.nio.ByteBuffer.wrap(b).putInt(b.length - 4, (int) crc.getValue());
        return b;
    }

    /** The run with byte {@code offset} of its filter block set to {@code value} and the block's CRC32C made good. */
    private static byte[] withFilterByte(byte[] run, int offset, int value) {
        byte[] b = run.clone();
        java.nio.ByteBuffer f = java.nio.ByteBuffer.wrap(b);
        int at = b.length - RunFormat.FOOTER_BYTES;
        int pos = (int) f.getLong(at + 12);
        int len = f.getInt(at + 20);
        b[pos + offset] = (byte) value;
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(b, pos, len - RunFormat.CRC_BYTES);
        f.putInt(pos + len - RunFormat.CRC_BYTES, (int) crc.getValue());
        return b;
    }

    private static long filterPosition(byte[] run) {
        return java.nio.ByteBuffer.wrap(run).getLong(run.length - RunFormat.FOOTER_BYTES + 12);
    }

    /**
     * This release writes format 4 (a blocked filter, separators in the index); format 3 runs keep full last keys,
     * format 2 and 1 runs (written through the writer's old paths) the standard filter too, and all four answer every
     * key and mostly skip absent ones.
     */
    @Test
    void format3And4RunsHoldABlockedFilterAndFormats1And2TheStandardOne() {
        TreeMap<String, List<RunEntry>> m = model(29, 4000);
        for (int version : new int[] {RunFormat.VERSION, RunFormat.VERSION_3, RunFormat.VERSION_2,
                RunFormat.VERSION_1}) {
            RunWriter w = version == RunFormat.VERSION ? new RunWriter(4096, 10)
                    : new RunWriter(4096, 10, 1 << 16, version);
            m.values().forEach(l -> l.forEach(w::add));
            byte[] bytes = w.finish().bytes();
            assertThat(footerVersion(bytes)).as("footer version").isEqualTo(version);
            Stored s = store(bytes);
            RunReader r = RunReader.open(s.source(), new BlockCache(0));
            assertThat(r.formatVersion()).isEqualTo(version);
            assertThat(r.filter()).as("format %d's filter", version)
                    .isInstanceOf(version >= 3 ? BlockedBloomFilter.class : BloomFilter.class);
            for (Map.Entry<String, List<RunEntry>> e : m.entrySet()) {
                assertEntry(r.get(e.getKey(), Long.MAX_VALUE), e.getValue().get(0));
            }
            int before = s.reads().get();
            int probes = 20_000;
            for (int i = 0; i < probes; i++) {
                assertThat(r.get("user" + String.format("%08d", i) + "y", Long.MAX_VALUE)).isNull();
            }
            assertThat((s.reads().get() - before) / (double) probes).as("block reads per absent get, format %d",
                    version).isLessThan(0.03);
        }
        assertThatThrownBy(() -> new RunWriter(4096, 10, 1 << 16, 5)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Format 4's index keys are separators, shorter than the blocks' last keys: the index shrinks, and a key that
     * falls between two blocks (a separator itself, or any key after a block's last) is found absent by a get and
     * seeks a scan to the next block's first key, as with format 3.
     */
    @Test
    void format4IndexSeparatorsAreShorterAndKeysBetweenBlocksStayAbsent() {
        TreeMap<String, List<RunEntry>> m = model(41, 4000);
        Random rnd = new Random(47); // and keys that differ early, as hashed keys do
        long version = 1;
        for (int i = 0; i < 4000; i++) {
            String key = "h" + Long.toHexString(rnd.nextLong());
            m.computeIfAbsent(key, k -> new ArrayList<>())
                    .add(RunEntry.put(key, version++, new byte[rnd.nextInt(200)]));
        }
        RunWriter w3 = new RunWriter(1024, 10, 1 << 16, RunFormat.VERSION_3);
        RunWriter w4 = new RunWriter(1024, 10);
        m.values().forEach(l -> l.forEach(e -> {
            w3.add(e);
            w4.add(e);
        }));
        byte[] b3 = w3.finish().bytes();
        byte[] b4 = w4.finish().bytes();
        int index3 = ByteBuffer.wrap(b3).getInt(b3.length - RunFormat.FOOTER_BYTES + 32); // the index's length
        int index4 = ByteBuffer.wrap(b4).getInt(b4.length - RunFormat.FOOTER_BYTES + 32);
        int blocks = (int) RunReader.open(store(b4).source(), new BlockCache(0)).meta().blocks();
        System.out.printf("[run format] index of %d blocks: %d bytes in format 3, %d in format 4%n", blocks, index3,
                index4);
        // no positions (2-3 bytes each past the first blocks), and keys shortened where neighbours differ early
        assertThat(index4).as("format-4 index bytes against format 3's %d", index3).isLessThan(index3 - 2 * blocks);
        assertThat(b3.length - b4.length).isEqualTo(index3 - index4); // only the index differs
        RunReader r = RunReader.open(store(b4).source(), new BlockCache(0));
        String prev = null;
        int between = 0;
        for (String k : m.keySet()) {
            assertEntry(r.get(k, Long.MAX_VALUE), m.get(k).get(0));
            if (prev != null) {
                String sep = RunFormat.separator(prev, k);
                if (!sep.equals(prev)) {
                    between++;
                    assertThat(r.get(sep, Long.MAX_VALUE)).as("separator %s between %s and %s", sep, prev, k).isNull();
                    Iterator<RunEntry> it = r.scan(sep, null);
                    assertThat(it.hasNext()).isTrue();
                    assertThat(it.next().key()).isEqualTo(k);
                    Iterator<RunEntry> back = r.scanReverse(null, sep);
                    assertThat(back.hasNext()).isTrue();
                    assertThat(back.next().key()).isEqualTo(prev);
                }
            }
            prev = k;
        }
        assertThat(between).as("keys between neighbours probed").isGreaterThan(3000);
    }

    @Test
    void aSeparatorLiesFromTheLastKeyToBeforeTheNextAndIsNeverLonger() {
        Random rnd = new Random(43);
        String[] alphabet = {"a", "b", "z", "0", "~", "\u00e9", "\ud83d\ude00", "\u4e2d"};
        for (int i = 0; i < 200_000; i++) {
            StringBuilder x = new StringBuilder();
            StringBuilder y = new StringBuilder();
            for (int j = rnd.nextInt(8); j >= 0; j--) {
                x.append(alphabet[rnd.nextInt(rnd.nextBoolean() ? 4 : alphabet.length)]);
            }
            y.append(x, 0, rnd.nextInt(x.length() + 1));
            for (int j = rnd.nextInt(6); j >= 0; j--) {
                y.append(alphabet[rnd.nextInt(rnd.nextBoolean() ? 4 : alphabet.length)]);
            }
            String last = x.toString().compareTo(y.toString()) <= 0 ? x.toString() : y.toString();
            String next = last.equals(x.toString()) ? y.toString() : x.toString();
            String sep = RunFormat.separator(last, next);
            assertThat(sep.compareTo(last)).as("'%s' against last '%s'", sep, last).isGreaterThanOrEqualTo(0);
            assertThat(sep.length()).isLessThanOrEqualTo(last.length());
            if (!sep.equals(last)) {
                assertThat(sep.compareTo(next)).as("'%s' against next '%s'", sep, next).isLessThan(0);
            }
        }
        assertThat(RunFormat.separator("user00012345", "user00019999")).isEqualTo("user00019");
        assertThat(RunFormat.separator("abc", "abd")).isEqualTo("abc"); // "abd" is next itself
        assertThat(RunFormat.separator("k\u00e9a", "k\u00e9b")).isEqualTo("k\u00e9a"); // not ASCII: the last key
    }

    @Test
    void aRunOfAnUnreadableVersionIsRefusedNamingTheReadableOnes() {
        byte[] good = write(model(31, 100), 1024).bytes();
        for (int version : new int[] {0, 5, 99}) {
            assertThatThrownBy(() -> RunReader.open(store(withFooterVersion(good, version)).source(),
                    new BlockCache(0))).isInstanceOf(CorruptRunException.class)
                    .hasMessageContaining("run format version " + version + " is not readable")
                    .hasMessageContaining("reads versions 1 to 4");
        }
    }

    /**
     * A filter block whose checksum is good but whose header is not one of its format's (a damaged kind or k, or a
     * format-2 standard filter under a footer that says 3) is a typed error at the filter block.
     */
    @Test
    void aFilterBlockThatDoesNotDecodeIsACorruptRunErrorAtTheFilter() {
        byte[] v3 = write(model(37, 500), 1024).bytes();
        RunWriter w2 = new RunWriter(1024, 10, 1 << 16, RunFormat.VERSION_2);
        model(37, 500).values().forEach(l -> l.forEach(w2::add));
        byte[] v2 = w2.finish().bytes();
        List<byte[]> bad = List.of(withFilterByte(v3, 0, 2), withFilterByte(v3, 0, 0), withFilterByte(v3, 1, 0),
                withFilterByte(v3, 1, 17), withFooterVersion(v2, 3), withFooterVersion(v2, 4),
                withFilterByte(v2, 0, 31));
        for (byte[] b : bad) {
            assertThatThrownBy(() -> RunReader.open(store(b).source(), new BlockCache(0)))
                    .isInstanceOf(CorruptRunException.class).hasMessageContaining("filter block")
                    .satisfies(e -> assertThat(((CorruptRunException) e).blockPosition())
                            .isEqualTo(filterPosition(b)));
        }
        // and the undamaged ones open
        assertThat(RunReader.open(store(v3).source(), new BlockCache(0)).formatVersion()).isEqualTo(RunFormat.VERSION);
        assertThat(RunReader.open(store(v2).source(), new BlockCache(0)).formatVersion()).isEqualTo(2);
    }

    @Test
    void outOfOrderEntriesAreRefused() {
        RunWriter w = new RunWriter(1024, 10);
        w.add(RunEntry.put("b", 5, new byte[1]));
        assertThatThrownBy(() -> w.add(RunEntry.put("a", 4, new byte[1]))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of order");
        assertThatThrownBy(() -> w.add(RunEntry.put("b", 5, new byte[1]))).isInstanceOf(IllegalArgumentException.class);
        w.add(RunEntry.delete("b", 4));
        w.finish();
        assertThatThrownBy(w::finish).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anEmptyRunOpensAndHoldsNothing() {
        RunReader r = RunReader.open(store(new RunWriter(1024, 10).finish().bytes()).source(), new BlockCache(1024));
        assertThat(r.meta().entries()).isZero();
        assertThat(r.get("a", Long.MAX_VALUE)).isNull();
        assertThat(r.scan(null, null).hasNext()).isFalse();
    }

    @Test
    void everyDamagedByteIsACorruptRunErrorNamingTheRunAndTheBlock() {
        TreeMap<String, List<RunEntry>> m = model(11, 200);
        byte[] good = write(m, 512).bytes();
        Random rnd = new Random(3);
        int detected = 0;
        for (int trial = 0; trial < 300; trial++) {
            byte[] bad = good.clone();
            int pos = trial < 60 ? good.length - 1 - trial : rnd.nextInt(good.length);
            bad[pos] ^= (byte) (1 + rnd.nextInt(255));
            try {
                RunReader r = RunReader.open(store(bad).source(), new BlockCache(0));
                for (String k : m.keySet()) {
                    r.get(k, Long.MAX_VALUE);
                }
                r.scan(null, null).forEachRemaining(e -> { });
                throw new AssertionError("damage at byte " + pos + " of " + good.length + " went unnoticed");
            } catch (CorruptRunException e) {
                assertThat(e.run()).isEqualTo(new RunId("L0-000001"));
                assertThat(e.getMessage()).contains("L0-000001").contains(LOG.toString());
                assertThat(e.blockPosition()).as("the damaged block's position for byte %d: %s", pos, e.getMessage())
                        .isBetween(-1L, (long) pos);
                detected++;
            }
        }
        assertThat(detected).isEqualTo(300);
        assertThatThrownBy(() -> RunReader.open(store(java.util.Arrays.copyOf(good, good.length - 1)).source(),
                new BlockCache(0))).isInstanceOf(CorruptRunException.class);
    }

    /**
     * Keys mixing supplementary characters with characters of U+E000-U+FFFF (where UTF-8 byte order and the engine's
     * UTF-16 order differ) are all found through the block index and restart points kept as bytes, in small blocks.
     */
    @Test
    void keysWhoseByteOrderDiffersFromStringOrderAreFoundAndScannedInOrder() {
        int[] cps = {'a', 0xE9, 0xD7FF, 0xE000, 0xFFFD, 0x10000, 0x1F600};
        Random rnd = new Random(7);
        TreeMap<String, List<RunEntry>> m = new TreeMap<>();
        for (int i = 0; i < 3000; i++) {
            StringBuilder b = new StringBuilder("k");
            for (int j = 0, n = 1 + rnd.nextInt(4); j < n; j++) {
                b.appendCodePoint(cps[rnd.nextInt(cps.length)]);
            }
            String key = b.toString();
            m.putIfAbsent(key, new ArrayList<>(List.of(RunEntry.put(key, 5, new byte[]{(byte) i}))));
        }
        RunReader r = RunReader.open(store(write(m, 256).bytes()).source(), new BlockCache(1 << 20));
        for (String key : m.keySet()) {
            assertThat(r.get(key, Long.MAX_VALUE)).as(key).isNotNull();
            assertThat(r.get(key + "\u0000", Long.MAX_VALUE)).isNull();
        }
        List<String> scanned = new ArrayList<>();
        r.scan(null, null).forEachRemaining(e -> scanned.add(e.key()));
        assertThat(scanned).containsExactlyElementsOf(m.keySet());
        String from = new ArrayList<>(m.keySet()).get(1000);
        List<String> tail = new ArrayList<>();
        r.scan(from, null).forEachRemaining(e -> tail.add(e.key()));
        assertThat(tail).containsExactlyElementsOf(m.tailMap(from, true).keySet());
    }
}

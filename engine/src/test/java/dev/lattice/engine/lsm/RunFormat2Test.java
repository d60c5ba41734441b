package dev.lattice.engine.lsm;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Run format 2 (expiring values, range tombstones) and manifest encoding 4, and that format 1 / encoding 3 still read. */
class RunFormat2Test {

    private static final LogId LOG = new LogId("t", 0);

    private static RunReader open(byte[] bytes) {
        InMemoryWalStorageProvider p = InMemoryWalStorageProvider.fresh();
        Fence f = p.claim(LOG);
        RunId id = new RunId("r1");
        p.runs().write(LOG, f, id, new ByteArrayInputStream(bytes), bytes.length);
        return RunReader.open(RunSource.of(p.runs(), LOG, id, bytes.length), new BlockCache(1 << 20));
    }

    private static List<RunEntry> all(Iterator<RunEntry> it) {
        List<RunEntry> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    private static List<RunEntry> entries() {
        List<RunEntry> es = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            String k = String.format("k%04d", i);
            es.add(i % 7 == 0 ? RunEntry.delete(k, 10 + i) : RunEntry.put(k, 10 + i, ("v" + i).getBytes()));
        }
        return es;
    }

    @Test
    void expiriesAndRangeTombstonesRoundTrip() {
        RunWriter w = new RunWriter(512, 10);
        for (int i = 0; i < 300; i++) {
            String k = String.format("m%04d", i);
            w.add(i % 2 == 0 ? RunEntry.put(k, i + 1, new byte[]{(byte) i}, 1_000_000L + i)
                    : RunEntry.put(k, i + 1, new byte[]{(byte) i}));
        }
        w.addRange(new RangeTombstone("z1", "z9", 500));
        w.addRange(new RangeTombstone("a", "b", 400));
        RunWriter.Finished f = w.finish();
        assertThat(f.meta().ranges()).containsExactly(new RangeTombstone("a", "b", 400),
                new RangeTombstone("z1", "z9", 500));
        assertThat(f.meta().firstKey()).as("the key range includes the range tombstones").isEqualTo("a");
        assertThat(f.meta().lastKey()).isEqualTo("z9");
        RunReader r = open(f.bytes());
        assertThat(r.meta()).isEqualTo(f.meta());
        assertThat(r.get("m0002", Long.MAX_VALUE).expiresAtMillis()).isEqualTo(1_000_002L);
        assertThat(r.get("m0003", Long.MAX_VALUE).expiresAtMillis()).isZero();
        List<RunEntry> scanned = all(r.scan(null, null));
        assertThat(scanned).hasSize(300);
        assertThat(scanned.get(4).expiredAt(1_000_004L)).isTrue();
        assertThat(scanned.get(4).expiredAt(1_000_003L)).isFalse();
        assertThat(all(r.scanReverse("m0010", "m0020"))).hasSize(10);
        // the manifest (encoding 4) carries the ranges, so reads need not open the run to know them
        Manifest m = new Manifest(7, 600, List.of(new Manifest.RunRef(new RunId("r1"), 0, f.length(), f.meta())),
                new byte[0]);
        Manifest back = ManifestCodec.decode(LOG, 7, ManifestCodec.encode(m));
        assertThat(back.runs().get(0).meta().ranges()).hasSize(2);
        assertThat(back.runs().get(0).meta()).isEqualTo(f.meta());
    }

    @Test
    void aRunOfOnlyRangeTombstonesIsValid() {
        RunWriter w = new RunWriter(512, 10);
        w.addRange(new RangeTombstone("a", "c", 9));
        RunReader r = open(w.finish().bytes());
        assertThat(r.meta().entries()).isZero();
        assertThat(r.meta().ranges()).containsExactly(new RangeTombstone("a", "c", 9));
        assertThat(r.get("b", Long.MAX_VALUE)).isNull();
        assertThat(all(r.scan(null, null))).isEmpty();
        assertThat(all(r.scanReverse(null, null))).isEmpty();
    }

    @Test
    void formatOneRunsStillRead() {
        List<RunEntry> es = entries();
        RunWriter.Finished f = LegacyRuns.runV1(es);
        byte[] bytes = f.bytes();
        assertThat(java.nio.ByteBuffer.wrap(bytes, bytes.length - RunFormat.FOOTER_BYTES + 8, 4).getInt())
                .as("footer version").isEqualTo(1);
        RunReader r = open(bytes);
        assertThat(r.meta().ranges()).isEmpty();
        assertThat(all(r.scan(null, null))).hasSize(es.size());
        for (RunEntry e : es) {
            RunEntry got = r.get(e.key(), Long.MAX_VALUE);
            assertThat(got.version()).isEqualTo(e.version());
            assertThat(got.tombstone()).isEqualTo(e.tombstone());
            assertThat(got.value()).isEqualTo(e.value());
            assertThat(got.expiresAtMillis()).isZero();
        }
        // format 1 cannot carry what it has no room for
        RunWriter w1 = new RunWriter(1024, 10, 1 << 16, RunFormat.VERSION_1);
        assertThatThrownBy(() -> w1.add(RunEntry.put("a", 1, new byte[0], 5))).isInstanceOf(
                IllegalArgumentException.class);
        assertThatThrownBy(() -> w1.addRange(new RangeTombstone("a", "b", 1))).isInstanceOf(
                IllegalStateException.class);
    }

    @Test
    void encodingThreeManifestsStillRead() {
        RunWriter.Finished f = LegacyRuns.runV1(entries());
        Manifest m = new Manifest(41, 9_999, List.of(new Manifest.RunRef(new RunId("e1-1-1"), 1, f.length(),
                f.meta())), new byte[]{1, 2, 3});
        byte[] v3 = LegacyRuns.manifestV3(m);
        assertThat(java.nio.ByteBuffer.wrap(v3, 4, 4).getInt()).isEqualTo(3);
        Manifest back = ManifestCodec.decode(LOG, 41, v3);
        assertThat(back.throughOffset()).isEqualTo(41);
        assertThat(back.lastVersion()).isEqualTo(9_999);
        assertThat(back.runs()).hasSize(1);
        assertThat(back.runs().get(0).meta()).isEqualTo(f.meta());
        assertThat(back.engineState()).containsExactly(1, 2, 3);
        byte[] v4 = ManifestCodec.encode(m);
        assertThat(java.nio.ByteBuffer.wrap(v4, 4, 4).getInt()).isEqualTo(ManifestCodec.ENCODING);
        byte[] unknown = v4.clone();
        java.nio.ByteBuffer.wrap(unknown).putInt(4, 5);
        assertThatThrownBy(() -> ManifestCodec.decode(LOG, 41, unknown))
                .isInstanceOf(dev.lattice.spi.CorruptLogException.class);
    }
}

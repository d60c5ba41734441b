package dev.lattice.bench.ycsb;

import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import static org.assertj.core.api.Assertions.assertThat;

class LatticeYcsbClientTest {

    private static final String STORAGE = "ycsb-binding-test";

    @AfterEach
    void drop() {
        InMemoryStorage.dropNamed(STORAGE);
    }

    private static LatticeYcsbClient open(String mode) throws Exception {
        LatticeYcsbClient db = new LatticeYcsbClient();
        Properties p = new Properties();
        p.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, "memory:" + STORAGE);
        p.setProperty(LatticeYcsbClient.PARTITIONS_PROPERTY, "2");
        p.setProperty(LatticeYcsbClient.UPDATE_PROPERTY, mode);
        db.setProperties(p);
        db.init();
        return db;
    }

    private static Map<String, ByteIterator> fields(String... kv) {
        Map<String, ByteIterator> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], new StringByteIterator(kv[i + 1]));
        }
        return m;
    }

    @Test
    void crudAndStatusCodes() throws Exception {
        for (String mode : new String[] {"rmw", "cas"}) {
            LatticeYcsbClient db = open(mode);
            String t = "usertable" + mode;
            assertThat(db.read(t, "k1", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
            assertThat(db.update(t, "k1", fields("field0", "x"))).isEqualTo(Status.NOT_FOUND);
            assertThat(db.delete(t, "k1")).isEqualTo(Status.NOT_FOUND);

            assertThat(db.insert(t, "k1", fields("field0", "a", "field1", "b"))).isEqualTo(Status.OK);
            assertThat(db.update(t, "k1", fields("field1", "B", "field2", "c"))).isEqualTo(Status.OK);
            Map<String, ByteIterator> row = new HashMap<>();
            assertThat(db.read(t, "k1", null, row)).isEqualTo(Status.OK);
            assertThat(row).containsOnlyKeys("field0", "field1", "field2");
            assertThat(row.get("field1").toString()).isEqualTo("B");
            Map<String, ByteIterator> sub = new HashMap<>();
            assertThat(db.read(t, "k1", Set.of("field2"), sub)).isEqualTo(Status.OK);
            assertThat(sub).containsOnlyKeys("field2");

            assertThat(db.delete(t, "k1")).isEqualTo(Status.OK);
            assertThat(db.read(t, "k1", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
            db.cleanup();
        }
    }

    @Test
    void scanStartsAtTheKeyAndStopsAtTheCount() throws Exception {
        LatticeYcsbClient db = open("rmw");
        for (int i = 0; i < 20; i++) {
            assertThat(db.insert("usertable", String.format("user%03d", i), fields("field0", "v" + i)))
                    .isEqualTo(Status.OK);
        }
        Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
        assertThat(db.scan("usertable", "user005", 4, null, rows)).isEqualTo(Status.OK);
        assertThat(rows).extracting(r -> r.get("field0").toString()).containsExactly("v5", "v6", "v7", "v8");
        Vector<HashMap<String, ByteIterator>> tail = new Vector<>();
        assertThat(db.scan("usertable", "user018", 100, null, tail)).isEqualTo(Status.OK);
        assertThat(tail).hasSize(2);
        assertThat(db.scan("usertable", "zzz", 5, null, new Vector<>())).isEqualTo(Status.NOT_FOUND);
        db.cleanup();
    }

    @Test
    void instancesShareOneLatticeUntilTheLastCleanup() throws Exception {
        LatticeYcsbClient a = open("rmw");
        LatticeYcsbClient b = open("rmw");
        assertThat(a.insert("usertable", "k", fields("field0", "1"))).isEqualTo(Status.OK);
        Map<String, ByteIterator> row = new HashMap<>();
        assertThat(b.read("usertable", "k", null, row)).isEqualTo(Status.OK);
        a.cleanup();
        assertThat(b.read("usertable", "k", null, new HashMap<>())).isEqualTo(Status.OK);
        b.cleanup();
    }

    @Test
    void failuresBecomeErrorStatusNotExceptions() throws Exception {
        LatticeYcsbClient db = open("rmw");
        long before = LatticeYcsbClient.errors();
        assertThat(db.insert("usertable", "k".repeat(100_000), fields("field0", "x"))).isEqualTo(Status.ERROR);
        assertThat(db.read("Bad Tree Name!", "k", null, new HashMap<>())).isEqualTo(Status.ERROR);
        assertThat(LatticeYcsbClient.errors()).isEqualTo(before + 2);
        db.cleanup();
    }
}

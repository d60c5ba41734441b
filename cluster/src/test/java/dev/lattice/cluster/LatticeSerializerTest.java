package dev.lattice.cluster;

import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.NotSerializableException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The cluster's message format: a request round-trips with every field; a request of a sender that predates the
 * per-part tree field (the same bytes without it) still decodes; damaged bytes and unknown operation codes are
 * refused by type.
 */
class LatticeSerializerTest {

    private static ActorSystem<Void> system;
    private static LatticeSerializer serializer;

    @BeforeAll
    static void start() {
        system = ActorSystem.create(Behaviors.empty(), "serializer-test");
        serializer = new LatticeSerializer((ExtendedActorSystem) Adapter.toClassic(system));
    }

    @AfterAll
    static void stop() {
        system.terminate();
    }

    private static Request crossTree(List<String> trees) {
        return new Request(Op.ATOMIC_COMMIT_TREES, "txn-1", null, null, 0, false, List.of("a", "b"),
                List.of("1".getBytes(StandardCharsets.UTF_8), "2".getBytes(StandardCharsets.UTF_8)),
                system.ignoreRef(), new byte[] {0, 0}, new long[] {0, 0}, trees);
    }

    @Test
    void aCrossTreeRequestRoundTripsWithItsTrees() throws Exception {
        Request r = crossTree(List.of("orders", "stock"));
        Request back = (Request) serializer.fromBinary(serializer.toBinary(r), serializer.manifest(r));
        assertThat(back.op()).isEqualTo(Op.ATOMIC_COMMIT_TREES);
        assertThat(back.keys()).containsExactly("a", "b");
        assertThat(back.trees()).containsExactly("orders", "stock");
        assertThat(back.kinds()).containsExactly(0, 0);
    }

    @Test
    void aRequestWithoutTheTreeFieldOfOlderSendersStillDecodes() throws Exception {
        Request r = new Request(Op.PUT, "k", null, "v".getBytes(StandardCharsets.UTF_8), 0, false, null, null,
                system.ignoreRef());
        byte[] bytes = serializer.toBinary(r);
        byte[] older = Arrays.copyOf(bytes, bytes.length - 4); // without the trailing absent list (length -1)
        Request back = (Request) serializer.fromBinary(older, serializer.manifest(r));
        assertThat(back.op()).isEqualTo(Op.PUT);
        assertThat(back.key()).isEqualTo("k");
        assertThat(back.trees()).isNull();
    }

    @Test
    void damagedBytesAndUnknownOperationsAreRefusedByType() {
        Request r = crossTree(List.of("orders", "stock"));
        byte[] bytes = serializer.toBinary(r);
        assertThatThrownBy(() -> serializer.fromBinary(Arrays.copyOf(bytes, 9), serializer.manifest(r)))
                .isInstanceOf(NotSerializableException.class).hasMessageContaining("damaged");
        byte[] unknown = bytes.clone();
        unknown[1] = (byte) 99; // the operation code after the format byte
        assertThatThrownBy(() -> serializer.fromBinary(unknown, serializer.manifest(r)))
                .isInstanceOf(NotSerializableException.class).hasMessageContaining("unknown operation code 99");
    }
}

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
 * per-part tree field or the scan session field (the same bytes without them) still decodes, as does a response
 * without the session field; the held-scan operations have codes of their own; damaged bytes are refused by type; an
 * unknown operation code becomes an {@link UnknownRequest} that keeps whom to answer (the entity answers it with a
 * typed error), while a serializer of protocol level 1 refuses every code above 16, as the previous release did.
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
    void damagedBytesAreRefusedByTypeAndAnUnknownOperationKeepsWhomToAnswer() throws Exception {
        Request r = crossTree(List.of("orders", "stock"));
        byte[] bytes = serializer.toBinary(r);
        assertThatThrownBy(() -> serializer.fromBinary(Arrays.copyOf(bytes, 9), serializer.manifest(r)))
                .isInstanceOf(NotSerializableException.class).hasMessageContaining("damaged");
        org.apache.pekko.actor.typed.ActorRef<Response> answerTo = system.deadLetters(); // one that resolves back
        Request q = new Request(Op.SCAN_OPEN, "a", "b", null, 10, false, null, null, answerTo);
        byte[] unknown = serializer.toBinary(q);
        unknown[1] = (byte) 99; // the operation code after the format byte
        Object read = serializer.fromBinary(unknown, serializer.manifest(r));
        assertThat(read).isInstanceOf(UnknownRequest.class);
        UnknownRequest u = (UnknownRequest) read;
        assertThat(u.code()).isEqualTo(99);
        assertThat(u.replyTo()).isEqualTo(answerTo);
        // it travels on as a request with that code (a region that forwards it), and reads back the same
        Object again = serializer.fromBinary(serializer.toBinary(u), serializer.manifest(u));
        assertThat(again).isEqualTo(u);
        Response refusal = u.refusal(PeerProtocols.CURRENT);
        assertThat(RemoteErrors.toException(refusal)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("operation code 99");
        // a damaged unknown request is still refused as damaged
        assertThatThrownBy(() -> serializer.fromBinary(Arrays.copyOf(unknown, 9), serializer.manifest(r)))
                .isInstanceOf(NotSerializableException.class).hasMessageContaining("damaged");
    }

    @Test
    void aSerializerOfLevelOneRefusesTheNewerCodesAsThePreviousReleaseDid() throws Exception {
        LatticeSerializer older = new LatticeSerializer((ExtendedActorSystem) Adapter.toClassic(system), 1);
        for (Op op : Op.values()) {
            Request q = new Request(op, "k", null, null, 0, false, null, null, system.ignoreRef());
            byte[] bytes = serializer.toBinary(q);
            if (op.code <= 16) {
                assertThat(op.level).as(op.toString()).isEqualTo(1);
                assertThat(((Request) older.fromBinary(bytes, serializer.manifest(q))).op()).isEqualTo(op);
            } else {
                assertThat(op.level).as(op.toString()).isEqualTo(op.code <= 24 ? 2 : 3);
                assertThatThrownBy(() -> older.fromBinary(bytes, serializer.manifest(q))).as(op.toString())
                        .isInstanceOf(NotSerializableException.class)
                        .hasMessageContaining("unknown operation code " + op.code);
            }
        }
    }

    @Test
    void aBatchOfPointReadsRoundTripsWithItsAbsentKeysAndALevelTwoNodeTakesItForUnknown() throws Exception {
        Request q = new Request(Op.GET_BATCH, null, null, null, 0, false, List.of("a", "b", "a"), null,
                system.deadLetters());
        byte[] bytes = serializer.toBinary(q);
        Request back = (Request) serializer.fromBinary(bytes, serializer.manifest(q));
        assertThat(back.op()).isEqualTo(Op.GET_BATCH);
        assertThat(back.keys()).containsExactly("a", "b", "a");
        Response r = Response.entries(List.of("a", "b"), Arrays.asList("x".getBytes(StandardCharsets.UTF_8), null),
                new long[] {7, 0}, new long[] {123, 0}, true);
        Response rb = (Response) serializer.fromBinary(serializer.toBinary(r), serializer.manifest(r));
        assertThat(rb.keys()).containsExactly("a", "b");
        assertThat(rb.values().get(0)).isEqualTo("x".getBytes(StandardCharsets.UTF_8));
        assertThat(rb.values().get(1)).as("an absent key's value").isNull();
        assertThat(rb.versions()).containsExactly(7, 0);
        assertThat(rb.expiries()).containsExactly(123, 0);
        assertThat(rb.flag()).as("cut at the message budget").isTrue();
        // a node of level 2 (the release before) reads the fields and answers UnsupportedOperationException
        LatticeSerializer level2 = new LatticeSerializer((ExtendedActorSystem) Adapter.toClassic(system), 2);
        Object read = level2.fromBinary(bytes, serializer.manifest(q));
        assertThat(read).isInstanceOf(UnknownRequest.class);
        assertThat(((UnknownRequest) read).code()).isEqualTo(Op.GET_BATCH.code);
    }

    @Test
    void heldScanStepsRoundTripWithTheirSession() throws Exception {
        Request open = new Request(Op.SCAN_OPEN, "a", "m", null, 50, true, null, null, system.ignoreRef());
        Request back = (Request) serializer.fromBinary(serializer.toBinary(open), serializer.manifest(open));
        assertThat(back.op()).isEqualTo(Op.SCAN_OPEN);
        assertThat(back.key()).isEqualTo("a");
        assertThat(back.toKey()).isEqualTo("m");
        assertThat(back.number()).isEqualTo(50);
        assertThat(back.flag()).isTrue();
        assertThat(back.session()).isZero();
        for (Op op : List.of(Op.SCAN_NEXT, Op.SCAN_CHECK, Op.SCAN_CLOSE)) {
            Request step = Request.scanStep(op, -0x1234_5678_9ABCL, 7, system.ignoreRef());
            Request got = (Request) serializer.fromBinary(serializer.toBinary(step), serializer.manifest(step));
            assertThat(got.op()).isEqualTo(op);
            assertThat(got.session()).isEqualTo(-0x1234_5678_9ABCL);
            assertThat(got.number()).isEqualTo(7);
        }
        Response first = Response.entries(List.of("a", "b"), List.of(new byte[] {1}, new byte[] {2}),
                new long[] {3, 4}, new long[2], true).withSession(99, (5L << 40) + 2);
        Response r = (Response) serializer.fromBinary(serializer.toBinary(first), serializer.manifest(first));
        assertThat(r.session()).isEqualTo(99);
        assertThat(r.number()).isEqualTo((5L << 40) + 2);
        assertThat(r.keys()).containsExactly("a", "b");
        assertThat(r.versions()).containsExactly(3, 4);
        assertThat(r.flag()).isTrue();
    }

    @Test
    void messagesOfSendersBeforeTheSessionFieldStillDecode() throws Exception {
        Request r = crossTree(List.of("orders", "stock"));
        byte[] bytes = serializer.toBinary(r);
        Request back = (Request) serializer.fromBinary(Arrays.copyOf(bytes, bytes.length - 8), serializer.manifest(r));
        assertThat(back.trees()).containsExactly("orders", "stock");
        assertThat(back.session()).isZero();
        Response ok = Response.ok(42, true);
        byte[] rb = serializer.toBinary(ok);
        Response older = (Response) serializer.fromBinary(Arrays.copyOf(rb, rb.length - 8), serializer.manifest(ok));
        assertThat(older.number()).isEqualTo(42);
        assertThat(older.flag()).isTrue();
        assertThat(older.session()).isZero();
    }

    @Test
    void theHeldScanOperationsHaveNewCodesThatAnOlderNodeRefuses() {
        // an older node knows the codes up to 16: it refuses these (unknown operation code) instead of misreading
        assertThat(List.of(Op.SCAN_OPEN.code, Op.SCAN_NEXT.code, Op.SCAN_CHECK.code, Op.SCAN_CLOSE.code))
                .containsExactly(17, 18, 19, 20);
        for (Op op : List.of(Op.SCAN_OPEN, Op.SCAN_NEXT, Op.SCAN_CHECK, Op.SCAN_CLOSE)) {
            assertThat(op.writes()).as(op + " is retried as a read").isFalse();
        }
        Request step = Request.scanStep(Op.SCAN_NEXT, 1, 1, system.ignoreRef());
        byte[] bytes = serializer.toBinary(step);
        assertThat(bytes[1]).isEqualTo((byte) 18);
    }

    @Test
    void thePrepareHoldOperationsHaveNewCodesAndRoundTripTheirHoldAndFlag() throws Exception {
        // a node of the version before knows the codes up to 22: it refuses these (see Op.PREPARE_HOLD)
        assertThat(List.of(Op.PREPARE_HOLD.code, Op.PREPARE_RELEASE.code)).containsExactly(23, 24);
        for (Op op : List.of(Op.PREPARE_HOLD, Op.PREPARE_RELEASE)) {
            assertThat(op.writes()).as(op + " changes no data").isFalse();
            Request h = Request.hold(op, -0x0123_4567_89ABL, 100, system.ignoreRef());
            byte[] bytes = serializer.toBinary(h);
            assertThat(bytes[1]).isEqualTo((byte) op.code);
            Request back = (Request) serializer.fromBinary(bytes, serializer.manifest(h));
            assertThat(back.op()).isEqualTo(op);
            assertThat(back.session()).isEqualTo(-0x0123_4567_89ABL);
            assertThat(back.number()).isEqualTo(100);
        }
        // a participant's prepare says whether the write continues the participant's tree; the parts travel as before
        List<dev.lattice.engine.AtomicOp> ops = List.of(new dev.lattice.engine.AtomicOp(
                dev.lattice.engine.AtomicOp.Kind.PUT, "k", "v".getBytes(StandardCharsets.UTF_8), 0));
        for (boolean continues : new boolean[] {false, true}) {
            Request p = Request.prepare("txn-9", "orders/0", ops, continues, system.ignoreRef());
            Request back = (Request) serializer.fromBinary(serializer.toBinary(p), serializer.manifest(p));
            assertThat(back.op()).isEqualTo(Op.PREPARE);
            assertThat(back.flag()).isEqualTo(continues);
            assertThat(back.key()).isEqualTo("txn-9");
            assertThat(back.toKey()).isEqualTo("orders/0");
            assertThat(back.atomicOps()).hasSize(1);
            assertThat(back.atomicOps().get(0).key()).isEqualTo("k");
        }
    }
}

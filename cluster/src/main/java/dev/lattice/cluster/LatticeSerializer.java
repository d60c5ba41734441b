package dev.lattice.cluster;

import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The explicit, versioned wire format of the cluster's messages (no Java serialization). Each message starts with
 * a format version byte ({@value #FORMAT}); the fields follow in a fixed order, strings as UTF-8 with a length,
 * absent strings and lists as length {@code -1}. Rules for a rolling upgrade between adjacent versions: a newer
 * version only appends fields after the known ones and keeps the manifests and {@link Op} codes, and a reader
 * ignores bytes after the fields it knows; so a node of version N reads messages of N+1 (without their new fields)
 * and N+1 reads N (with the new fields at their defaults). A new operation gets a new {@link Op} code (and a
 * protocol {@link Op#level}) and uses the existing fields; senders use it only when every hosting member advertises
 * that level ({@link PeerProtocols}).
 *
 * <p><b>An operation code this node does not know</b> (a newer node's, sent despite the above, e.g. in the moment
 * before its sender saw a member join): the fields are still read (their layout does not depend on the code) and the
 * message becomes an {@link UnknownRequest}, which the entity answers with {@link UnsupportedOperationException}, so
 * the sender fails at once or falls back; the first time this serializer meets each such code it logs a warning.
 * The release before this one (protocol level 1) refused such a message instead ({@link NotSerializableException}),
 * which Pekko drops, so its sender's attempt times out; a node whose Pekko settings lower its level to 1
 * ({@link PeerProtocols#LEVEL_SETTING}, for tests) behaves so, and refuses every code above level 1.
 *
 * <p>Bound in this module's {@code lattice-cluster-defaults.conf}. Thread-safe.
 */
public final class LatticeSerializer extends SerializerWithStringManifest {

    /** The format version this code writes. */
    static final int FORMAT = 1;
    private static final String REQUEST = "lattice.Request";
    private static final String RESPONSE = "lattice.Response";

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LatticeSerializer.class);

    private final ExtendedActorSystem system;
    /** The node's wire protocol level: which {@link Op} codes it reads. */
    private final int level;
    /** The unknown operation codes met so far (each is logged once). */
    private final java.util.Set<Integer> unknownSeen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile ActorRefResolver resolver;

    /**
     * Called by Pekko's serialization extension.
     *
     * @param system the actor system (its settings give the protocol level, {@link PeerProtocols#configured})
     * @throws IllegalArgumentException if {@link PeerProtocols#LEVEL_SETTING} is out of range
     */
    public LatticeSerializer(ExtendedActorSystem system) {
        this(system, PeerProtocols.configured(system.settings().config()));
    }

    /** A serializer reading the codes of protocol {@code level} (tests). */
    LatticeSerializer(ExtendedActorSystem system, int level) {
        this.system = system;
        this.level = level;
    }

    /** @return this serializer's id, unique among the system's serializers */
    @Override
    public int identifier() {
        return 0x1A77_1CE1;
    }

    /**
     * @param o a cluster message
     * @return its manifest
     * @throws IllegalArgumentException if the message is not one of this module's
     */
    @Override
    public String manifest(Object o) {
        if (o instanceof Request || o instanceof UnknownRequest) {
            return REQUEST;
        }
        if (o instanceof Response) {
            return RESPONSE;
        }
        throw new IllegalArgumentException("not a Lattice cluster message: " + o.getClass().getName());
    }

    /**
     * @param o a cluster message
     * @return its bytes
     * @throws IllegalArgumentException if the message is not one of this module's
     */
    @Override
    public byte[] toBinary(Object o) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            if (o instanceof Request r) {
                writeRequest(out, r);
            } else if (o instanceof UnknownRequest u) {
                writeUnknown(out, u);
            } else if (o instanceof Response r) {
                writeResponse(out, r);
            } else {
                throw new IllegalArgumentException("not a Lattice cluster message: " + o.getClass().getName());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * @param bytes a message's bytes
     * @param manifest its manifest
     * @return the message; an {@link UnknownRequest} for a request whose operation code this node does not know
     * @throws NotSerializableException if the manifest is unknown, the version is older than 1, the bytes are
     *     cut short, or (on a node of protocol level 1 only) the message holds an operation code above level 1
     */
    @Override
    public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int version = in.readUnsignedByte();
            if (version < 1) {
                throw new NotSerializableException("Lattice cluster message of format " + version);
            }
            return switch (manifest) {
                case REQUEST -> readRequest(in);
                case RESPONSE -> readResponse(in);
                default -> throw new NotSerializableException("unknown Lattice cluster manifest '" + manifest + "'");
            };
        } catch (IOException e) {
            NotSerializableException n = new NotSerializableException("damaged Lattice cluster message ("
                    + manifest + ", " + bytes.length + " bytes): " + e);
            n.initCause(e);
            throw n;
        } catch (IllegalArgumentException e) {
            NotSerializableException n = new NotSerializableException("Lattice cluster message (" + manifest
                    + ") this node cannot read: " + e.getMessage());
            n.initCause(e);
            throw n;
        }
    }

    private void writeRequest(DataOutputStream out, Request r) throws IOException {
        out.writeByte(r.op().code);
        writeString(out, r.key());
        writeString(out, r.toKey());
        writeBytes(out, r.value());
        out.writeLong(r.number());
        out.writeBoolean(r.flag());
        writeStrings(out, r.keys());
        writeByteList(out, r.values());
        writeString(out, resolver().toSerializationFormat(r.replyTo()));
        writeBytes(out, r.kinds());
        writeLongs(out, r.numbers());
        writeStrings(out, r.trees()); // added after format 1's first release: absent in older senders' messages
        out.writeLong(r.session()); // added with the held scans: absent in older senders' messages
    }

    /** A request with the code of an operation this node does not know, and no other field. */
    private void writeUnknown(DataOutputStream out, UnknownRequest u) throws IOException {
        out.writeByte(u.code());
        writeString(out, null);
        writeString(out, null);
        writeBytes(out, null);
        out.writeLong(0);
        out.writeBoolean(false);
        writeStrings(out, null);
        writeByteList(out, null);
        writeString(out, resolver().toSerializationFormat(u.replyTo()));
        writeBytes(out, null);
        writeLongs(out, null);
        writeStrings(out, null);
        out.writeLong(0);
    }

    private EntityMessage readRequest(DataInputStream in) throws IOException {
        int code = in.readUnsignedByte();
        Op op;
        try {
            op = Op.ofCode(code, level);
        } catch (IllegalArgumentException e) {
            if (level <= PeerProtocols.OLDEST) {
                throw e; // as the release before: refused, and Pekko drops the message
            }
            op = null;
        }
        String key = readString(in);
        String toKey = readString(in);
        byte[] value = readBytes(in);
        long number = in.readLong();
        boolean flag = in.readBoolean();
        List<String> keys = readStrings(in);
        List<byte[]> values = readByteList(in);
        ActorRef<Response> replyTo = resolver().resolveActorRef(readString(in));
        byte[] kinds = readBytes(in);
        long[] numbers = readLongs(in);
        List<String> trees = in.available() > 0 ? readStrings(in) : null;
        long session = in.available() >= 8 ? in.readLong() : 0;
        if (op == null) {
            if (unknownSeen.add(code)) {
                LOG.warn("a request with operation code {}, unknown at this node's wire protocol level {}, came from"
                        + " a node of a newer version; it is answered with UnsupportedOperationException (logged once"
                        + " per code)", code, level);
            }
            return new UnknownRequest(code, replyTo);
        }
        return new Request(op, key, toKey, value, number, flag, keys, values, replyTo, kinds, numbers, trees,
                session);
    }

    private static void writeResponse(DataOutputStream out, Response r) throws IOException {
        out.writeBoolean(r.ok());
        out.writeLong(r.number());
        out.writeBoolean(r.flag());
        writeStrings(out, r.keys());
        writeByteList(out, r.values());
        writeLongs(out, r.versions());
        writeLongs(out, r.expiries());
        writeString(out, r.errorType());
        writeString(out, r.errorMessage());
        writeString(out, r.errorTree());
        out.writeInt(r.errorPartition());
        out.writeLong(r.errorEpoch());
        out.writeLong(r.session()); // added with the held scans: absent in older senders' messages
    }

    private static Response readResponse(DataInputStream in) throws IOException {
        return new Response(in.readBoolean(), in.readLong(), in.readBoolean(), readStrings(in), readByteList(in),
                readLongs(in), readLongs(in), readString(in), readString(in), readString(in), in.readInt(),
                in.readLong(), in.available() >= 8 ? in.readLong() : 0);
    }

    private ActorRefResolver resolver() {
        ActorRefResolver r = resolver;
        if (r == null) {
            r = ActorRefResolver.get(Adapter.toTyped(system));
            resolver = r;
        }
        return r;
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        writeBytes(out, s == null ? null : s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static String readString(DataInputStream in) throws IOException {
        byte[] b = readBytes(in);
        return b == null ? null : new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
        if (b == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(b.length);
            out.write(b);
        }
    }

    private static byte[] readBytes(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < -1) {
            throw new IOException("negative length " + n);
        }
        if (n == -1) {
            return null;
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    private static void writeStrings(DataOutputStream out, List<String> l) throws IOException {
        out.writeInt(l == null ? -1 : l.size());
        if (l != null) {
            for (String s : l) {
                writeString(out, s);
            }
        }
    }

    private static List<String> readStrings(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        List<String> l = new ArrayList<>(Math.min(n, 1 << 16));
        for (int i = 0; i < n; i++) {
            l.add(readString(in));
        }
        return l;
    }

    private static void writeByteList(DataOutputStream out, List<byte[]> l) throws IOException {
        out.writeInt(l == null ? -1 : l.size());
        if (l != null) {
            for (byte[] b : l) {
                writeBytes(out, b);
            }
        }
    }

    private static List<byte[]> readByteList(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        List<byte[]> l = new ArrayList<>(Math.min(n, 1 << 16));
        for (int i = 0; i < n; i++) {
            l.add(readBytes(in));
        }
        return l;
    }

    private static void writeLongs(DataOutputStream out, long[] a) throws IOException {
        out.writeInt(a == null ? -1 : a.length);
        if (a != null) {
            for (long v : a) {
                out.writeLong(v);
            }
        }
    }

    private static long[] readLongs(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = in.readLong();
        }
        return a;
    }
}

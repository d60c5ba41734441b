package dev.lattice.pekko.persistence;

import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.Serialization$;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * Writes and reads one object with Pekko serialization as {@code serializer id (int), manifest (UTF), length (int),
 * bytes}, so the object can be read back by the serializer that wrote it (also after bindings change).
 *
 * <p>Thread-safe (Pekko's serialization is).
 */
final class PayloadCodec {

    private final ExtendedActorSystem system;
    private final Serialization serialization;

    PayloadCodec(ExtendedActorSystem system) {
        this.system = system;
        this.serialization = SerializationExtension.get(system);
    }

    /**
     * Serializes with the actor system's transport information set, so that actor references inside the object
     * are written with the system's address.
     *
     * @param obj the object
     * @return its bytes
     * @throws RuntimeException if no serializer can write it
     */
    byte[] toBinary(Object obj) {
        return Serialization$.MODULE$.withTransportInformation(system,
                () -> serialization.findSerializerFor(obj).toBinary(obj));
    }

    /**
     * @param out the stream
     * @param obj the object
     * @throws IOException from the stream
     * @throws RuntimeException (e.g. {@link java.io.NotSerializableException} wrapped) if no serializer can write it
     */
    void write(DataOutputStream out, Object obj) throws IOException {
        Serializer ser = serialization.findSerializerFor(obj);
        String manifest = Serializers.manifestFor(ser, obj);
        byte[] bytes = Serialization$.MODULE$.withTransportInformation(system, () -> ser.toBinary(obj));
        out.writeInt(ser.identifier());
        out.writeUTF(manifest);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    /**
     * @param in the stream
     * @return the object
     * @throws IOException from the stream, or if the data is truncated
     * @throws RuntimeException if the serializer is unknown or fails
     */
    Object read(DataInputStream in) throws IOException {
        int id = in.readInt();
        String manifest = in.readUTF();
        int len = in.readInt();
        if (len < 0) {
            throw new IOException("corrupt payload length " + len);
        }
        byte[] bytes = in.readNBytes(len);
        if (bytes.length != len) {
            throw new IOException("truncated payload: " + bytes.length + " of " + len + " bytes");
        }
        return serialization.deserialize(bytes, id, manifest).get();
    }
}

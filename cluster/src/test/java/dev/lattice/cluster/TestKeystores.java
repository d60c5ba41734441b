package dev.lattice.cluster;

import java.nio.file.Path;
import java.util.List;

/**
 * Key stores for the TLS tests: a cluster CA whose trust store the members share and member key stores signed by
 * that CA, made by {@link ClusterCertificates} (what {@code lattice cluster certs} runs), and self-signed identities
 * that the cluster does not trust (made with {@code keytool} directly). All files are PKCS12 with one password,
 * valid for 2 days, under the given directory. Not thread-safe.
 */
final class TestKeystores {

    static final String PASSWORD = "lattice-test-pw";
    private static final String PW = ClusterCertificates.PASSWORD_ENV;

    private final ClusterCertificates ca;

    private TestKeystores(ClusterCertificates ca) {
        this.ca = ca;
    }

    /** Creates the cluster CA (key store {@code ca.p12}, certificate {@code ca.crt}) and the members' trust store. */
    static TestKeystores clusterCa(Path dir) {
        return new TestKeystores(ClusterCertificates.createCa(dir, PASSWORD, "Lattice test cluster CA", 2));
    }

    /** @return the trust store holding the CA's certificate */
    Path trustStore() {
        return ca.trustStore();
    }

    /**
     * A member's key store: a fresh key whose certificate (CN {@code name}, SAN ip:127.0.0.1 and dns:localhost)
     * the CA signed, with the chain up to the CA.
     */
    Path member(String name) {
        return ca.nodeKeyStore(name, List.of("127.0.0.1", "localhost"), 2);
    }

    /**
     * A self-signed identity outside the cluster (same CN and SAN as a member, other key): its key store and a
     * trust store that trusts only itself. {@code [0]} is the key store, {@code [1]} the trust store.
     */
    static Path[] stranger(Path dir, String name) {
        Path store = dir.resolve(name + ".p12");
        Path crt = dir.resolve(name + ".crt");
        Path trust = dir.resolve(name + "-truststore.p12");
        ClusterCertificates.keytool(PASSWORD, "-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname",
                "secp256r1", "-validity", "2", "-dname", "CN=" + name, "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-ext", "EKU=serverAuth,clientAuth", "-keystore", store.toString(), "-storetype", "PKCS12",
                "-storepass:env", PW, "-keypass:env", PW);
        ClusterCertificates.keytool(PASSWORD, "-exportcert", "-rfc", "-alias", "node", "-keystore", store.toString(),
                "-storepass:env", PW, "-file", crt.toString());
        ClusterCertificates.keytool(PASSWORD, "-importcert", "-noprompt", "-alias", "self", "-file", crt.toString(),
                "-keystore", trust.toString(), "-storetype", "PKCS12", "-storepass:env", PW);
        return new Path[] {store, trust};
    }
}

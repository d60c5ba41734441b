package dev.lattice.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Key stores for the TLS tests, made with the JDK's {@code keytool} (run as a process, as an operator would): a
 * cluster CA whose trust store the members share, member key stores signed by that CA, and self-signed identities
 * that the cluster does not trust. All files are PKCS12 with one password, under the given directory. Not
 * thread-safe.
 */
final class TestKeystores {

    static final String PASSWORD = "lattice-test-pw";
    private static final String KEYTOOL = Paths.get(System.getProperty("java.home"), "bin", "keytool").toString();

    private final Path dir;
    private final Path caStore;
    private final Path caCert;
    private final Path trustStore;

    private TestKeystores(Path dir) {
        this.dir = dir;
        this.caStore = dir.resolve("ca.p12");
        this.caCert = dir.resolve("ca.crt");
        this.trustStore = dir.resolve("cluster-truststore.p12");
    }

    /** Creates the cluster CA (key store {@code ca.p12}, certificate {@code ca.crt}) and the members' trust store. */
    static TestKeystores clusterCa(Path dir) {
        TestKeystores k = new TestKeystores(dir);
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=Lattice test cluster CA", "-ext", "bc:c", "-keystore", k.caStore.toString(),
                "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", k.caStore.toString(), "-storepass", PASSWORD,
                "-file", k.caCert.toString());
        keytool("-importcert", "-noprompt", "-alias", "lattice-ca", "-file", k.caCert.toString(),
                "-keystore", k.trustStore.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        return k;
    }

    /** @return the trust store holding the CA's certificate */
    Path trustStore() {
        return trustStore;
    }

    /**
     * A member's key store: a fresh key whose certificate (CN {@code name}, SAN ip:127.0.0.1 and dns:localhost)
     * the CA signed, with the chain up to the CA.
     */
    Path member(String name) {
        Path store = dir.resolve(name + ".p12");
        Path csr = dir.resolve(name + ".csr");
        Path crt = dir.resolve(name + ".crt");
        keytool("-genkeypair", "-alias", "node", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=" + name, "-keystore", store.toString(), "-storetype", "PKCS12",
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-certreq", "-alias", "node", "-keystore", store.toString(), "-storepass", PASSWORD,
                "-file", csr.toString());
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", caStore.toString(), "-storepass", PASSWORD,
                "-infile", csr.toString(), "-outfile", crt.toString(), "-validity", "2",
                "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-ext", "KU=digitalSignature,keyEncipherment",
                "-ext", "EKU=serverAuth,clientAuth");
        keytool("-importcert", "-noprompt", "-alias", "lattice-ca", "-file", caCert.toString(),
                "-keystore", store.toString(), "-storepass", PASSWORD);
        keytool("-importcert", "-alias", "node", "-file", crt.toString(), "-keystore", store.toString(),
                "-storepass", PASSWORD);
        return store;
    }

    /**
     * A self-signed identity outside the cluster (same CN and SAN as a member, other key): its key store and a
     * trust store that trusts only itself. {@code [0]} is the key store, {@code [1]} the trust store.
     */
    static Path[] stranger(Path dir, String name) {
        Path store = dir.resolve(name + ".p12");
        Path crt = dir.resolve(name + ".crt");
        Path trust = dir.resolve(name + "-truststore.p12");
        keytool("-genkeypair", "-alias", "node", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=" + name, "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-keystore", store.toString(),
                "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "node", "-keystore", store.toString(), "-storepass", PASSWORD,
                "-file", crt.toString());
        keytool("-importcert", "-noprompt", "-alias", "self", "-file", crt.toString(),
                "-keystore", trust.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        return new Path[] {store, trust};
    }

    private static void keytool(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(KEYTOOL);
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("keytool did not finish within 60 s: " + cmd);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("keytool failed (exit " + p.exitValue() + "): " + String.join(" ", args)
                        + "\n" + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running keytool", e);
        }
    }
}

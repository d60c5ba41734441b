package dev.lattice.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Makes the key material of {@link ClusterTls}: a cluster CA, the trust store every node shares (the CA's
 * certificate only) and, per node, a PKCS12 key store with a fresh key and a certificate the CA signed (usable as
 * TLS server and client, as a node is both), with the chain up to the CA. What {@code lattice cluster certs} and
 * the demo and example run; see {@code docs/cluster.md}.
 *
 * <p>Keys are EC P-256 with SHA256withECDSA signatures. The key pairs, the signing requests and the signatures are
 * made by the JDK's {@code keytool} (run as a process from {@code java.home}: the JDK has no public API that
 * signs certificates), with the password passed through the child's environment, never on its command line; the
 * rest (the CA's PEM certificate, the trust store, installing a signed chain) uses {@code java.security.KeyStore}.
 * One password opens every store and key. Files are created, never overwritten; on POSIX file systems the key
 * stores are readable by their owner only.
 *
 * <p>Layout in the directory: {@link #CA_KEY_STORE} (the CA's private key: keep it offline, the nodes do not need
 * it), {@link #CA_CERTIFICATE} (PEM), {@link #TRUST_STORE}, and {@code NAME.p12} per node. Instances are immutable;
 * {@link #nodeKeyStore} may be called from several threads at once for different names.
 */
public final class ClusterCertificates {

    /** The CA's key store (its private key and self-signed certificate). */
    public static final String CA_KEY_STORE = "ca.p12";
    /** The CA's certificate, PEM. */
    public static final String CA_CERTIFICATE = "ca.crt";
    /** The trust store every node uses: the CA's certificate only. */
    public static final String TRUST_STORE = "cluster-truststore.p12";
    /** The alias of a node's key entry in its key store. */
    public static final String NODE_ALIAS = "node";
    /** Longest validity accepted, in days (about 27 years). */
    public static final int MAX_VALIDITY_DAYS = 10_000;

    private static final String CA_ALIAS = "ca";
    private static final String TRUST_ALIAS = "lattice-ca";
    static final String PASSWORD_ENV = "LATTICE_KEYTOOL_PASSWORD";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    private static final Pattern DNS = Pattern.compile("(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})"
            + "(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*");
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final long KEYTOOL_TIMEOUT_SECONDS = 120;

    private final Path dir;
    private final String password;

    private ClusterCertificates(Path dir, String password) {
        this.dir = dir;
        this.password = password;
    }

    /**
     * Creates a cluster CA in {@code dir} (created if missing): {@link #CA_KEY_STORE}, {@link #CA_CERTIFICATE} and
     * {@link #TRUST_STORE}.
     *
     * @param dir the directory
     * @param password the password of every store and key made with the result; at least 6 characters (keytool's
     *     minimum)
     * @param caName the CA certificate's common name, e.g. {@code Lattice cluster CA}; letters, digits, spaces and
     *     {@code . _ -} only
     * @param validityDays how long the CA certificate is valid, 1..{@link #MAX_VALIDITY_DAYS}
     * @return the CA, to make node key stores with
     * @throws IllegalArgumentException for a bad argument, or if one of the three files exists already
     * @throws UncheckedIOException if the directory or a file cannot be written
     * @throws CertificateToolException if keytool is missing or fails
     */
    public static ClusterCertificates createCa(Path dir, String password, String caName, int validityDays) {
        Objects.requireNonNull(dir, "dir");
        checkPassword(password);
        Objects.requireNonNull(caName, "caName");
        if (!caName.matches("[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}")) {
            throw new IllegalArgumentException("CA name must be letters, digits, spaces and . _ - (at most 63), got '"
                    + caName + "'");
        }
        checkValidity(validityDays);
        ClusterCertificates c = new ClusterCertificates(dir.toAbsolutePath(), password);
        for (String f : List.of(CA_KEY_STORE, CA_CERTIFICATE, TRUST_STORE)) {
            c.checkAbsent(c.dir.resolve(f));
        }
        try {
            Files.createDirectories(c.dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + c.dir, e);
        }
        Path caStore = c.dir.resolve(CA_KEY_STORE);
        keytool(password, "-genkeypair", "-alias", CA_ALIAS, "-keyalg", "EC", "-groupname", "secp256r1",
                "-sigalg", "SHA256withECDSA", "-validity", Integer.toString(validityDays), "-dname", "CN=" + caName,
                "-ext", "bc:c", "-ext", "KU=keyCertSign,cRLSign", "-keystore", caStore.toString(),
                "-storetype", "PKCS12", "-storepass:env", PASSWORD_ENV, "-keypass:env", PASSWORD_ENV);
        ownerOnly(caStore);
        X509Certificate ca = c.caCert();
        writeNew(c.dir.resolve(CA_CERTIFICATE), pem(ca).getBytes(StandardCharsets.US_ASCII));
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry(TRUST_ALIAS, ca);
            c.store(trust, c.dir.resolve(TRUST_STORE));
        } catch (IOException | GeneralSecurityException e) {
            throw new CertificateToolException("cannot write the trust store " + c.dir.resolve(TRUST_STORE) + ": "
                    + e.getMessage(), e);
        }
        return c;
    }

    /**
     * An existing CA made by {@link #createCa} (to add nodes later).
     *
     * @param dir the directory holding {@link #CA_KEY_STORE} and {@link #TRUST_STORE}
     * @param password their password
     * @return the CA
     * @throws IllegalArgumentException if a file is missing or the password does not open the CA's key store
     */
    public static ClusterCertificates existing(Path dir, String password) {
        checkPassword(password);
        ClusterCertificates c = new ClusterCertificates(dir.toAbsolutePath(), password);
        for (String f : List.of(CA_KEY_STORE, TRUST_STORE)) {
            if (!Files.isRegularFile(c.dir.resolve(f))) {
                throw new IllegalArgumentException(c.dir.resolve(f) + ": no such file (not a cluster CA directory)");
            }
        }
        c.caCert();
        return c;
    }

    /**
     * Makes a node's key store {@code NAME.p12}: a fresh key, its certificate (CN {@code name}, extended key usages
     * serverAuth and clientAuth, the given SANs) signed by the CA, and the chain node → CA.
     *
     * @param name the node's name: file name and certificate CN; letters, digits and {@code . _ -}, at most 63
     * @param hosts the node's addresses for its certificate's subject alternative names (IP literals become
     *     {@code ip:}, other names {@code dns:}); empty for none (they matter only with hostname verification)
     * @param validityDays how long the certificate is valid, 1..{@link #MAX_VALIDITY_DAYS}
     * @return the key store's path
     * @throws IllegalArgumentException for a bad name or host, or if the key store exists already
     * @throws UncheckedIOException if a file cannot be written
     * @throws CertificateToolException if keytool is missing or fails
     */
    public Path nodeKeyStore(String name, Collection<String> hosts, int validityDays) {
        checkName(name);
        List<String> sans = new ArrayList<>();
        for (String h : hosts) {
            sans.add(san(h));
        }
        checkValidity(validityDays);
        Path store = dir.resolve(name + ".p12");
        checkAbsent(store);
        Path csr = dir.resolve(name + ".csr.tmp");
        Path crt = dir.resolve(name + ".crt.tmp");
        try {
            keytool(password, "-genkeypair", "-alias", NODE_ALIAS, "-keyalg", "EC", "-groupname", "secp256r1",
                    "-sigalg", "SHA256withECDSA", "-validity", Integer.toString(validityDays), "-dname", "CN=" + name,
                    "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass:env", PASSWORD_ENV,
                    "-keypass:env", PASSWORD_ENV);
            ownerOnly(store);
            keytool(password, "-certreq", "-alias", NODE_ALIAS, "-keystore", store.toString(),
                    "-storepass:env", PASSWORD_ENV, "-file", csr.toString());
            List<String> gencert = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", CA_ALIAS,
                    "-keystore", dir.resolve(CA_KEY_STORE).toString(), "-storepass:env", PASSWORD_ENV,
                    "-sigalg", "SHA256withECDSA", "-infile", csr.toString(), "-outfile", crt.toString(),
                    "-validity", Integer.toString(validityDays), "-ext", "KU=digitalSignature",
                    "-ext", "EKU=serverAuth,clientAuth"));
            if (!sans.isEmpty()) {
                gencert.add("-ext");
                gencert.add("SAN=" + String.join(",", sans));
            }
            keytool(password, gencert.toArray(new String[0]));
            installChain(store, crt);
            return store;
        } finally {
            deleteQuietly(csr);
            deleteQuietly(crt);
        }
    }

    /**
     * @param keyStore a node's key store made by {@link #nodeKeyStore}
     * @return {@link ClusterTls#of} with it, {@link #trustStore()} and the password
     */
    public ClusterTls tls(Path keyStore) {
        return ClusterTls.of(keyStore, trustStore(), password);
    }

    /** @return the directory (absolute) */
    public Path dir() {
        return dir;
    }

    /** @return the trust store every node uses */
    public Path trustStore() {
        return dir.resolve(TRUST_STORE);
    }

    /** @return the CA's certificate (PEM) */
    public Path caCertificate() {
        return dir.resolve(CA_CERTIFICATE);
    }

    /** @return the CA's key store (keep it offline) */
    public Path caKeyStore() {
        return dir.resolve(CA_KEY_STORE);
    }

    /**
     * A random password for throwaway certificates (the demo and the example): 24 characters of URL-safe Base64 from
     * {@link SecureRandom} (144 bits).
     *
     * @return the password
     */
    public static String randomPassword() {
        byte[] b = new byte[18];
        new SecureRandom().nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /**
     * Writes a password to a new file readable by its owner only (on POSIX), without a line break.
     *
     * @param file the file; must not exist
     * @param password the password
     * @throws IllegalArgumentException if the file exists
     * @throws UncheckedIOException if it cannot be written
     */
    public static void writePasswordFile(Path file, String password) {
        checkPassword(password);
        writeNew(file, password.getBytes(StandardCharsets.UTF_8));
        ownerOnly(file);
    }

    /**
     * @param name a node name
     * @throws IllegalArgumentException unless it is letters, digits and {@code . _ -} (first a letter or digit),
     *     1..63 characters
     */
    public static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("node name must be letters, digits and . _ - (starting with a letter "
                    + "or digit, at most 63), got '" + name + "'");
        }
    }

    /**
     * @param host an IP literal or a DNS name
     * @return keytool's SAN entry for it: {@code ip:ADDRESS} or {@code dns:NAME}
     * @throws IllegalArgumentException if it is neither
     */
    public static String san(String host) {
        String h = host == null ? "" : host.trim();
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (IPV4.matcher(h).matches() || h.contains(":")) {
            try {
                for (String part : IPV4.matcher(h).matches() ? h.split("\\.") : new String[0]) {
                    if (Integer.parseInt(part) > 255) {
                        throw new IllegalArgumentException("'" + host + "' is not an IP address");
                    }
                }
                if (h.contains(":") && !h.matches("[0-9A-Fa-f:.]+")) {
                    throw new IllegalArgumentException("'" + host + "' is not an IP address or DNS name");
                }
                return "ip:" + InetAddress.getByName(h).getHostAddress();
            } catch (java.net.UnknownHostException e) {
                throw new IllegalArgumentException("'" + host + "' is not an IP address", e);
            }
        }
        if (!DNS.matcher(h).matches()) {
            throw new IllegalArgumentException("'" + host + "' is not an IP address or DNS name");
        }
        return "dns:" + h;
    }

    private static void checkPassword(String password) {
        Objects.requireNonNull(password, "password");
        if (password.length() < 6) {
            throw new IllegalArgumentException("the key store password must have at least 6 characters");
        }
    }

    private static void checkValidity(int days) {
        if (days < 1 || days > MAX_VALIDITY_DAYS) {
            throw new IllegalArgumentException("validity must be 1.." + MAX_VALIDITY_DAYS + " days, got " + days);
        }
    }

    private void checkAbsent(Path file) {
        if (Files.exists(file)) {
            throw new IllegalArgumentException(file + " exists already (certificates are never overwritten: "
                    + "pick an empty directory)");
        }
    }

    private X509Certificate caCert() {
        KeyStore ks = load(dir.resolve(CA_KEY_STORE));
        try {
            Certificate c = ks.getCertificate(CA_ALIAS);
            if (!(c instanceof X509Certificate x)) {
                throw new IllegalArgumentException(dir.resolve(CA_KEY_STORE) + " holds no CA certificate");
            }
            return x;
        } catch (GeneralSecurityException e) {
            throw new CertificateToolException("cannot read " + dir.resolve(CA_KEY_STORE) + ": " + e.getMessage(), e);
        }
    }

    /** Replaces the node's self-signed certificate with the CA-signed one and the CA's: the chain node → CA. */
    private void installChain(Path store, Path crt) {
        KeyStore ks = load(store);
        try (InputStream in = Files.newInputStream(crt)) {
            X509Certificate signed = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            X509Certificate ca = caCert();
            signed.verify(ca.getPublicKey());
            Key key = ks.getKey(NODE_ALIAS, password.toCharArray());
            if (!(key instanceof PrivateKey)) {
                throw new CertificateToolException(store + " holds no private key '" + NODE_ALIAS + "'", null);
            }
            ks.setKeyEntry(NODE_ALIAS, key, password.toCharArray(), new Certificate[] {signed, ca});
            ks.setCertificateEntry(TRUST_ALIAS, ca);
            Path tmp = store.resolveSibling(store.getFileName() + ".tmp");
            store(ks, tmp);
            Files.move(tmp, store, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            ownerOnly(store);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + store, e);
        } catch (GeneralSecurityException e) {
            throw new CertificateToolException("cannot install the signed certificate in " + store + ": "
                    + e.getMessage(), e);
        }
    }

    private KeyStore load(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password.toCharArray());
            return ks;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(file + ": cannot be opened as a PKCS12 key store with the password ("
                    + e.getMessage() + ")", e);
        }
    }

    private void store(KeyStore ks, Path file) throws IOException, GeneralSecurityException {
        try (OutputStream out = Files.newOutputStream(file, java.nio.file.StandardOpenOption.CREATE_NEW)) {
            ownerOnly(file);
            ks.store(out, password.toCharArray());
        }
    }

    private static String pem(X509Certificate c) {
        try {
            return "-----BEGIN CERTIFICATE-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(c.getEncoded())
                    + "\n-----END CERTIFICATE-----\n";
        } catch (java.security.cert.CertificateEncodingException e) {
            throw new CertificateToolException("cannot encode the CA certificate: " + e.getMessage(), e);
        }
    }

    private static void writeNew(Path file, byte[] bytes) {
        try {
            Files.write(file, bytes, java.nio.file.StandardOpenOption.CREATE_NEW);
        } catch (FileAlreadyExistsException e) {
            throw new IllegalArgumentException(file + " exists already", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static void ownerOnly(Path file) {
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException notPosix) {
            // e.g. Windows: the directory's ACL applies
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restrict the permissions of " + file, e);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // a temporary file left behind holds no secret (a signing request or a certificate)
        }
    }

    /**
     * Runs {@code keytool} from {@code java.home} with {@code password} in its environment as
     * {@code $LATTICE_KEYTOOL_PASSWORD} (for {@code -storepass:env} / {@code -keypass:env}).
     *
     * @param password the value of the environment variable
     * @param args keytool's arguments
     * @throws CertificateToolException if keytool is missing, fails (with its output) or runs longer than 120 s
     */
    static void keytool(String password, String... args) {
        Path tool = Paths.get(System.getProperty("java.home"), "bin",
                System.getProperty("os.name", "").startsWith("Windows") ? "keytool.exe" : "keytool");
        if (!Files.isExecutable(tool)) {
            throw new CertificateToolException("no keytool at " + tool + " (run with a full JDK or JRE)", null);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(tool.toString());
        cmd.add("-J-XX:TieredStopAtLevel=1");
        cmd.add("-J-XX:+UseSerialGC");
        cmd.addAll(List.of(args));
        Path log = null;
        try {
            log = Files.createTempFile("lattice-keytool-", ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
            Map<String, String> env = pb.environment();
            env.put(PASSWORD_ENV, password);
            env.remove("JAVA_TOOL_OPTIONS");
            env.remove("JDK_JAVA_OPTIONS");
            Process p = pb.start();
            p.getOutputStream().close();
            if (!p.waitFor(KEYTOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new CertificateToolException("keytool " + args[0] + " did not finish within "
                        + KEYTOOL_TIMEOUT_SECONDS + " s", null);
            }
            if (p.exitValue() != 0) {
                String out = Files.readString(log, StandardCharsets.UTF_8);
                throw new CertificateToolException("keytool " + String.join(" ", args) + " failed (exit "
                        + p.exitValue() + "): " + out.strip().replace('\n', ' '), null);
            }
        } catch (IOException e) {
            throw new CertificateToolException("cannot run " + tool + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CertificateToolException("interrupted while running keytool", e);
        } finally {
            if (log != null) {
                deleteQuietly(log);
            }
        }
    }
}

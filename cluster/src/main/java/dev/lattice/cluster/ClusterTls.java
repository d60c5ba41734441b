package dev.lattice.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;

import javax.net.ssl.KeyManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * TLS with mutual authentication for the cluster's traffic (Pekko Artery's {@code tls-tcp} transport with
 * {@code ConfigSSLEngineProvider}): every connection between nodes is encrypted, and both ends must present a
 * certificate that the other's trust store trusts, so a node without such a certificate never joins and is never
 * served. A node's key store holds its private key and certificate (signed by the cluster's CA, or one certificate
 * shared by all members); its trust store holds the CA's certificate. See {@code docs/cluster.md}.
 *
 * <p>The key stores are files of the JDK's default key store type (PKCS12 on Java 17; JKS files load too); one
 * password opens the key store, its key and the trust store. The password ends up in the node's in-memory Pekko
 * configuration; {@link #toString} does not show it. Immutable and thread-safe.
 */
public final class ClusterTls {

    /** The Pekko configuration section the settings go to. */
    public static final String SSL_ENGINE = "pekko.remote.artery.ssl.config-ssl-engine";
    static final String CONFIG_PROVIDER = "org.apache.pekko.remote.artery.tcp.ConfigSSLEngineProvider";
    private static final List<String> TLS13_SUITES = List.of("TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256");
    private static final List<String> TLS12_SUITES = List.of("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");

    private final Path keyStore;
    private final Path trustStore;
    private final String password;
    private final String protocol;
    private final boolean hostnameVerification;

    private ClusterTls(Path keyStore, Path trustStore, String password, String protocol, boolean hostnameVerification) {
        this.keyStore = keyStore;
        this.trustStore = trustStore;
        this.password = password;
        this.protocol = protocol;
        this.hostnameVerification = hostnameVerification;
    }

    /**
     * TLSv1.3 with mutual authentication and without hostname verification (the peer is authenticated by the CA
     * that signed its certificate, whatever its address).
     *
     * @param keyStore this node's key store: its private key and certificate chain
     * @param trustStore the certificates this node trusts (the cluster's CA)
     * @param password the password of both stores and of the key; not empty
     * @return the settings; the files are read (and checked) when the node starts
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the password is empty
     */
    public static ClusterTls of(Path keyStore, Path trustStore, String password) {
        Objects.requireNonNull(keyStore, "keyStore");
        Objects.requireNonNull(trustStore, "trustStore");
        Objects.requireNonNull(password, "password");
        if (password.isEmpty()) {
            throw new IllegalArgumentException("the key store password must not be empty");
        }
        return new ClusterTls(keyStore.toAbsolutePath(), trustStore.toAbsolutePath(), password, "TLSv1.3", false);
    }

    /**
     * @param protocol {@code TLSv1.3} (the default) or {@code TLSv1.2}; every node of a cluster must use the same
     * @return a copy with that protocol and its AES-GCM cipher suites
     * @throws IllegalArgumentException for any other protocol
     */
    public ClusterTls protocol(String protocol) {
        if (!"TLSv1.3".equals(protocol) && !"TLSv1.2".equals(protocol)) {
            throw new IllegalArgumentException("TLS protocol must be TLSv1.3 or TLSv1.2, got " + protocol);
        }
        return new ClusterTls(keyStore, trustStore, password, protocol, hostnameVerification);
    }

    /**
     * @param on true to also check, when connecting, that the peer's certificate names the address connected to
     *     (its canonical hostname, e.g. a SAN {@code ip:127.0.0.1} or {@code dns:node-1.example}); default off
     * @return a copy with that setting
     */
    public ClusterTls hostnameVerification(boolean on) {
        return new ClusterTls(keyStore, trustStore, password, protocol, on);
    }

    /** @return this node's key store (absolute) */
    public Path keyStore() {
        return keyStore;
    }

    /** @return this node's trust store (absolute) */
    public Path trustStore() {
        return trustStore;
    }

    /** @return {@code TLSv1.3} or {@code TLSv1.2} */
    public String protocol() {
        return protocol;
    }

    /** @return whether peers' hostnames are verified */
    public boolean hostnameVerification() {
        return hostnameVerification;
    }

    /**
     * The Pekko settings: {@code pekko.remote.artery.transport = tls-tcp}, the {@code ConfigSSLEngineProvider}, and
     * under {@link #SSL_ENGINE} the stores, the password, the protocol and its cipher suites,
     * {@code require-mutual-authentication = on} and {@code hostname-verification}.
     *
     * @return the settings (without checking the files)
     */
    public Config pekkoConfig() {
        List<String> suites = "TLSv1.3".equals(protocol) ? TLS13_SUITES : TLS12_SUITES;
        return ConfigFactory.empty()
                .withValue("pekko.remote.artery.transport", ConfigValueFactory.fromAnyRef("tls-tcp"))
                .withValue("pekko.remote.artery.ssl.ssl-engine-provider", ConfigValueFactory.fromAnyRef(CONFIG_PROVIDER))
                .withValue(SSL_ENGINE + ".key-store", ConfigValueFactory.fromAnyRef(keyStore.toString()))
                .withValue(SSL_ENGINE + ".key-store-password", ConfigValueFactory.fromAnyRef(password))
                .withValue(SSL_ENGINE + ".key-password", ConfigValueFactory.fromAnyRef(password))
                .withValue(SSL_ENGINE + ".trust-store", ConfigValueFactory.fromAnyRef(trustStore.toString()))
                .withValue(SSL_ENGINE + ".trust-store-password", ConfigValueFactory.fromAnyRef(password))
                .withValue(SSL_ENGINE + ".protocol", ConfigValueFactory.fromAnyRef(protocol))
                .withValue(SSL_ENGINE + ".enabled-algorithms", ConfigValueFactory.fromIterable(suites))
                .withValue(SSL_ENGINE + ".require-mutual-authentication", ConfigValueFactory.fromAnyRef(true))
                .withValue(SSL_ENGINE + ".hostname-verification", ConfigValueFactory.fromAnyRef(hostnameVerification));
    }

    /**
     * Checks the stores of a node's complete Pekko configuration when it uses {@code tls-tcp} with the
     * {@code ConfigSSLEngineProvider} (whether set by {@link LatticeClusterConfig.Builder#tls} or by hand): the key
     * store must be a readable key store that its password opens, with a private key that the key password opens;
     * the trust store must open with its password and hold at least one certificate. Other transports and
     * providers are not checked.
     *
     * @param pekko the node's Pekko configuration with its fallbacks
     * @throws IllegalArgumentException naming the setting, the path and the problem
     */
    static void checkStores(Config pekko) {
        if (!"tls-tcp".equals(pekko.getString("pekko.remote.artery.transport"))
                || !CONFIG_PROVIDER.equals(pekko.getString("pekko.remote.artery.ssl.ssl-engine-provider"))) {
            return;
        }
        Config c = pekko.getConfig(SSL_ENGINE);
        KeyStore keys = load("key-store", c.getString("key-store"), c.getString("key-store-password"));
        KeyStore trust = load("trust-store", c.getString("trust-store"), c.getString("trust-store-password"));
        String keyPath = c.getString("key-store");
        try {
            boolean hasKey = false;
            for (String alias : Collections.list(keys.aliases())) {
                hasKey |= keys.isKeyEntry(alias);
            }
            if (!hasKey) {
                throw new IllegalArgumentException(SSL_ENGINE + ".key-store " + keyPath
                        + " holds no private key (a node needs its own key and certificate)");
            }
            KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm())
                    .init(keys, c.getString("key-password").toCharArray());
            boolean hasCert = false;
            for (String alias : Collections.list(trust.aliases())) {
                hasCert |= trust.getCertificate(alias) != null;
            }
            if (!hasCert) {
                throw new IllegalArgumentException(SSL_ENGINE + ".trust-store " + c.getString("trust-store")
                        + " holds no certificate (it must hold the cluster's CA certificate)");
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(SSL_ENGINE + ".key-store " + keyPath
                    + ": the key password does not open its private key (" + e.getMessage() + ")", e);
        }
    }

    private static KeyStore load(String setting, String file, String password) {
        Path path = Paths.get(file);
        String what = SSL_ENGINE + "." + setting + " " + path.toAbsolutePath();
        if (!Files.exists(path)) {
            throw new IllegalArgumentException(what + ": no such file");
        }
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new IllegalArgumentException(what + ": not a readable file");
        }
        try (InputStream in = Files.newInputStream(path)) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(in, password.toCharArray());
            return ks;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(what + ": cannot be opened as a " + KeyStore.getDefaultType()
                    + " key store with its password (" + e.getMessage() + ")", e);
        }
    }

    /** @return the stores and settings, without the password */
    @Override
    public String toString() {
        return "ClusterTls[keyStore=" + keyStore + ", trustStore=" + trustStore + ", protocol=" + protocol
                + ", mutualAuthentication=on, hostnameVerification=" + hostnameVerification + "]";
    }
}

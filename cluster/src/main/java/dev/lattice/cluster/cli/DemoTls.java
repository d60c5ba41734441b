package dev.lattice.cluster.cli;

import dev.lattice.cluster.ClusterCertificates;
import dev.lattice.cluster.ClusterTls;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The throwaway TLS material of one {@code lattice cluster demo} run ({@link ClusterCertificates}): a cluster CA, a
 * key store per node JVM ({@code node-1.p12} ...) and one for the demo's own routing member, a random password in
 * a file (owner-only), all under the demo's temporary directory, deleted with it. Immutable.
 */
final class DemoTls {

    private final ClusterCertificates ca;
    private final List<Path> nodeStores;
    private final Path routerStore;
    private final Path passwordFile;

    private DemoTls(ClusterCertificates ca, List<Path> nodeStores, Path routerStore, Path passwordFile) {
        this.ca = ca;
        this.nodeStores = nodeStores;
        this.routerStore = routerStore;
        this.passwordFile = passwordFile;
    }

    /**
     * Makes the CA and the key stores, the nodes' side by side (keytool is a JVM per step).
     *
     * @param dir a directory that does not exist yet or is empty
     * @param nodes node JVMs
     * @return the material
     * @throws dev.lattice.cluster.CertificateToolException if keytool fails
     */
    static DemoTls make(Path dir, int nodes) {
        String password = ClusterCertificates.randomPassword();
        ClusterCertificates ca = ClusterCertificates.createCa(dir, password, "Lattice demo cluster CA", 1);
        Path pw = dir.resolve(ClusterCertsCommand.PASSWORD_FILE);
        ClusterCertificates.writePasswordFile(pw, password);
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(nodes + 1, 4));
        try {
            List<CompletableFuture<Path>> made = new ArrayList<>();
            for (int i = 0; i <= nodes; i++) {
                String name = i < nodes ? ClusterCertsCommand.name(i + 1) : "demo-router";
                made.add(CompletableFuture.supplyAsync(() -> ca.nodeKeyStore(name, List.of("127.0.0.1"), 1), pool));
            }
            List<Path> stores = new ArrayList<>();
            for (CompletableFuture<Path> f : made) {
                try {
                    stores.add(f.join());
                } catch (CompletionException e) {
                    throw e.getCause() instanceof RuntimeException r ? r : e;
                }
            }
            return new DemoTls(ca, List.copyOf(stores.subList(0, nodes)), stores.get(nodes), pw);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * @param i the node's index, 0-based
     * @return its {@code lattice cluster node} options: {@code --tls-key-store}, {@code --tls-trust-store},
     *     {@code --tls-password-file}
     */
    List<String> nodeOptions(int i) {
        return List.of("--tls-key-store", nodeStores.get(i).toString(), "--tls-trust-store",
                ca.trustStore().toString(), "--tls-password-file", passwordFile.toString());
    }

    /** @return the demo's own member's settings */
    ClusterTls routerTls() {
        return ca.tls(routerStore);
    }
}

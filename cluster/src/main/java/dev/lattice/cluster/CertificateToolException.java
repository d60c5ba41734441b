package dev.lattice.cluster;

/**
 * Making certificates failed ({@link ClusterCertificates}): {@code keytool} is missing, failed (its output is in the
 * message; it never holds the password) or timed out, or a store could not be written. Unchecked.
 */
public final class CertificateToolException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause the underlying failure, or null
     */
    public CertificateToolException(String message, Throwable cause) {
        super(message, cause);
    }
}

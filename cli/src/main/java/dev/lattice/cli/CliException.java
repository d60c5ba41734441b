package dev.lattice.cli;

/**
 * A failure the CLI reports as one line on standard error with a chosen exit code, without a stack trace (unless
 * {@code --verbose}). Unchecked.
 */
public final class CliException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    /**
     * @param exitCode the process exit code, one of the {@link ExitCodes} constants (never 0)
     * @param message one line saying what went wrong and, where it helps, what to do
     */
    public CliException(int exitCode, String message) {
        this(exitCode, message, null);
    }

    /**
     * @param exitCode the process exit code, one of the {@link ExitCodes} constants (never 0)
     * @param message one line saying what went wrong
     * @param cause the underlying failure (printed with {@code --verbose}), or null
     */
    public CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        if (exitCode == ExitCodes.OK) {
            throw new IllegalArgumentException("a CliException needs a non-zero exit code");
        }
        this.exitCode = exitCode;
    }

    /** @return the process exit code */
    public int exitCode() {
        return exitCode;
    }

    /**
     * A usage error: bad arguments, an unknown provider scheme, a malformed URI.
     *
     * @param message what is wrong
     * @return the exception, exit code {@link ExitCodes#USAGE}
     */
    public static CliException usage(String message) {
        return new CliException(ExitCodes.USAGE, message);
    }
}

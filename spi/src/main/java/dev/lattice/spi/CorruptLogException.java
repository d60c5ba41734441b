package dev.lattice.spi;

/**
 * A stored record or checkpoint fails its checksum or cannot be decoded. Never skipped silently: reading or
 * opening stops here.
 */
public class CorruptLogException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final long offset;

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param offset the offset of the bad record (or the checkpoint's through-offset), or {@code -1} when unknown
     * @param message what is wrong
     * @param cause the decoding failure, or null
     */
    public CorruptLogException(LogId log, long offset, String message, Throwable cause) {
        super(log, (offset >= 0 ? "corrupt record at offset " + offset + ": " : "corrupt data: ") + message, cause);
        this.offset = offset;
    }

    /**
     * Creates the exception.
     *
     * @param log the log
     * @param offset the offset of the bad record, or {@code -1} when unknown
     * @param message what is wrong
     */
    public CorruptLogException(LogId log, long offset, String message) {
        this(log, offset, message, null);
    }

    /** {@return the offset of the bad record, or {@code -1} when unknown} */
    public long offset() {
        return offset;
    }
}

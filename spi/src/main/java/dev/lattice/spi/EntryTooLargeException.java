package dev.lattice.spi;

/** One entry is larger than the provider can ever store ({@link ProviderLimits#maxEntryBytes()}). Thrown before any I/O. */
public class EntryTooLargeException extends WalStorageException {

    private static final long serialVersionUID = 1L;

    private final long sizeBytes;
    private final long limitBytes;

    /**
     * Creates the exception.
     *
     * @param log the log, or null
     * @param offset the entry's offset, or {@code -1} when unknown
     * @param sizeBytes the entry's size, in bytes
     * @param limitBytes the provider's limit, in bytes
     */
    public EntryTooLargeException(LogId log, long offset, long sizeBytes, long limitBytes) {
        super(log, "entry" + (offset >= 0 ? " at offset " + offset : "") + " is " + sizeBytes
                + " bytes, more than the provider's limit of " + limitBytes + " bytes per entry");
        this.sizeBytes = sizeBytes;
        this.limitBytes = limitBytes;
    }

    /** {@return the rejected entry's size, in bytes} */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** {@return the limit, in bytes} */
    public long limitBytes() {
        return limitBytes;
    }
}

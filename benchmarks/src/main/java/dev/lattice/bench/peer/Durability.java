package dev.lattice.bench.peer;

/**
 * The two durability settings the peer comparison runs at, each the same for both stores (WAL always on).
 */
public enum Durability {
    /**
     * A write returns once its log record is in the OS page cache: Lattice Chronicle {@code durability=process}
     * (memory-mapped append, no fsync), RocksDB WAL with {@code sync=false} ({@code write()} to the WAL file, no
     * fsync). Survives a process crash, not an OS crash.
     */
    PAGE_CACHE("page cache", "process", false),
    /**
     * A write returns once its log record is forced to disk: Lattice Chronicle {@code durability=fsync}
     * (fdatasync per commit, many writes per commit under concurrency), RocksDB {@code sync=true} (fsync of the WAL per
     * write group). Survives an OS crash.
     */
    FSYNC("fsync", "fsync", true);

    private final String label;
    private final String chronicle;
    private final boolean rocksSync;

    Durability(String label, String chronicle, boolean rocksSync) {
        this.label = label;
        this.chronicle = chronicle;
        this.rocksSync = rocksSync;
    }

    /** @return a short label for tables */
    public String label() {
        return label;
    }

    /** @return the Chronicle provider's {@code durability} option */
    public String chronicleOption() {
        return chronicle;
    }

    /** @return RocksDB's {@code WriteOptions.sync} */
    public boolean rocksSync() {
        return rocksSync;
    }

    /**
     * @param text {@code page-cache} or {@code fsync} (case-insensitive; {@code process} accepted)
     * @return the setting
     * @throws IllegalArgumentException for anything else
     */
    public static Durability parse(String text) {
        return switch (text.toLowerCase(java.util.Locale.ROOT)) {
            case "page-cache", "pagecache", "process" -> PAGE_CACHE;
            case "fsync" -> FSYNC;
            default -> throw new IllegalArgumentException("durability must be page-cache or fsync, got '" + text + "'");
        };
    }
}

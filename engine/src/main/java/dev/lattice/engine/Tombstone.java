package dev.lattice.engine;

/**
 * A delete kept in a memtable because an older value of the key may live in a lower layer (a frozen memtable or a
 * run): it hides that value until compaction drops both. {@link #ABSENT} is what lookups return for "deleted" when
 * the version does not matter.
 *
 * @param version the delete's version, 0 when unknown
 */
record Tombstone(long version) {

    /** A deleted key seen by a read. */
    static final Tombstone ABSENT = new Tombstone(0);
}

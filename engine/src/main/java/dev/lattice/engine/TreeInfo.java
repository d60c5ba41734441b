package dev.lattice.engine;

import java.time.Instant;

/**
 * What the catalog knows of a tree. Immutable.
 *
 * @param name the tree's name
 * @param partitions its partition count
 * @param hashVersion the version of its partition hash (1 for trees created before versions existed)
 * @param created when it was created (the creating process's wall clock; {@link Instant#EPOCH} when unknown)
 * @param placement which provider key each partition's log lives on
 */
public record TreeInfo(String name, int partitions, int hashVersion, Instant created, Placement placement) {
}

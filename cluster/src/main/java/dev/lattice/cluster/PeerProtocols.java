package dev.lattice.cluster;

import com.typesafe.config.Config;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What the cluster's hosting members understand on the wire, for a rolling upgrade that mixes two adjacent versions.
 * Every node advertises its wire protocol level as a Pekko member role {@code lattice-protocol-N} (gossiped with the
 * membership, so every node sees every member's level); a member without such a role is of level 1, the release
 * before the held scans (it advertised none). Each {@link Op} names the level that introduced it; a sender uses an
 * operation only when every member with the {@link LatticeCluster#HOST_ROLE} role (any of them may own the
 * partition it is sent to, now or after a rebalance) and this node are of that level or above, and otherwise the
 * operations of the level below ({@link ClusterTree#scan}: per-page {@link Op#SCAN}; {@link ClusterTree#count}:
 * per-partition {@link Op#COUNT}). Members that are down or leaving still count until they are removed, so the
 * answer errs towards the older protocol.
 *
 * <p>Levels: 1, the release before the held scans (codes 1 to 16); 2, the release with held scans, idempotency keys,
 * {@code COUNT_CUT} and prepare holds (codes 17 to 24); 3, this release (batched point reads, {@code GET_BATCH}: code
 * 25; while a host is of level 2 or below, point reads go one per message as before). A node's own level is
 * {@value #CURRENT} unless its Pekko settings say otherwise ({@value #LEVEL_SETTING}, for tests only: a node at level
 * 1 advertises no level and refuses the newer codes exactly as a node of that release does; a node at level 2
 * answers the newer codes with {@link UnsupportedOperationException} as that release does). Thread-safe.
 */
final class PeerProtocols {

    private static final Logger LOG = LoggerFactory.getLogger(PeerProtocols.class);
    /** The protocol level this code speaks. */
    static final int CURRENT = 3;
    /** The oldest level this code works with (the adjacent older release). */
    static final int OLDEST = 1;
    /** The prefix of the member role that advertises a node's level. */
    static final String ROLE_PREFIX = "lattice-protocol-";
    /** The Pekko setting that lowers a node's own level (tests that simulate a node of an older release). */
    static final String LEVEL_SETTING = "lattice.wire.protocol-level";

    private final int own;
    private final Supplier<Iterable<Member>> members;
    /** Test hook: take every member for one of this node's level (no fallback). */
    private volatile boolean assumeOwnLevel;
    private volatile int lastSeen;

    /**
     * @param own this node's level
     * @param members the members as this node sees them now (Pekko's cluster state)
     */
    PeerProtocols(int own, Supplier<Iterable<Member>> members) {
        this.own = own;
        this.members = members;
        this.lastSeen = own;
    }

    /**
     * @param pekko a node's Pekko settings (with this module's defaults)
     * @return the node's level: {@value #LEVEL_SETTING} when set, else {@value #CURRENT}
     * @throws IllegalArgumentException if the setting is outside {@value #OLDEST}..{@value #CURRENT}
     */
    static int configured(Config pekko) {
        int level = pekko.hasPath(LEVEL_SETTING) ? pekko.getInt(LEVEL_SETTING) : CURRENT;
        if (level < OLDEST || level > CURRENT) {
            throw new IllegalArgumentException(LEVEL_SETTING + " must be " + OLDEST + ".." + CURRENT + ", got " + level);
        }
        return level;
    }

    /** @return the role a node of {@code level} advertises; none at level 1 (that release had none) */
    static Optional<String> role(int level) {
        return level <= OLDEST ? Optional.empty() : Optional.of(ROLE_PREFIX + level);
    }

    /** @return the highest level among {@code roles}, {@value #OLDEST} when none is advertised or none parses */
    static int levelOf(Set<String> roles) {
        int level = OLDEST;
        for (String r : roles) {
            if (r.startsWith(ROLE_PREFIX)) {
                try {
                    level = Math.max(level, Integer.parseInt(r.substring(ROLE_PREFIX.length())));
                } catch (NumberFormatException ignored) {
                    // not ours: ignore
                }
            }
        }
        return level;
    }

    /** @return this node's own level */
    int own() {
        return own;
    }

    /**
     * @return the lowest level among this node and the hosting members it sees now (members not yet removed);
     *     logged once each time it changes
     */
    int hostLevel() {
        int level = own;
        if (!assumeOwnLevel) {
            for (Member m : members.get()) {
                if (m.status() != MemberStatus.removed() && m.getRoles().contains(LatticeCluster.HOST_ROLE)) {
                    level = Math.min(level, levelOf(m.getRoles()));
                }
            }
        }
        if (level != lastSeen) {
            lastSeen = level;
            LOG.info("the cluster's hosting members speak wire protocol level {} at the least (this node: {}){}", level,
                    own, level < 2 ? ": scans and counts through this node read each partition on its own"
                            + " (not one cut) until every member is upgraded (docs/cluster.md \"Rolling upgrades\")"
                            : level < CURRENT ? ": point reads through this node go one per message until every"
                            + " member is upgraded (docs/cluster.md \"Rolling upgrades\")" : "");
        }
        return level;
    }

    /** @return true when every hosting member and this node understand {@code op} */
    boolean understood(Op op) {
        return hostLevel() >= op.level;
    }

    /** Test hook: when true, this node takes every member for one of its own level, as a node without the fallback. */
    void assumeOwnLevel(boolean assume) {
        this.assumeOwnLevel = assume;
    }
}

package dev.lattice.pekko.persistence;

import org.apache.pekko.Done;
import org.apache.pekko.persistence.state.scaladsl.DurableStateUpdateStore;
import org.apache.pekko.persistence.state.scaladsl.GetObjectResult;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;

import java.util.Objects;

/**
 * The Scala API view of a {@link LatticeDurableStateStore} (what Pekko's typed {@code DurableStateBehavior} uses);
 * every call delegates to it with the same semantics.
 *
 * <p>Thread-safe.
 */
public final class ScalaDurableStateStore implements DurableStateUpdateStore<Object> {

    private final LatticeDurableStateStore store;

    /**
     * @param store the Java API store
     * @throws NullPointerException if {@code store} is null
     */
    public ScalaDurableStateStore(LatticeDurableStateStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /**
     * @param persistenceId the persistence id
     * @return as {@link LatticeDurableStateStore#getObject}
     */
    @Override
    public Future<GetObjectResult<Object>> getObject(String persistenceId) {
        return FutureConverters.asScala(store.getObject(persistenceId).thenApply(r -> r.toScala()));
    }

    /**
     * @param persistenceId the persistence id
     * @param revision the new revision
     * @param value the object
     * @param tag the tag
     * @return as {@link LatticeDurableStateStore#upsertObject}
     */
    @Override
    public Future<Done> upsertObject(String persistenceId, long revision, Object value, String tag) {
        return FutureConverters.asScala(store.upsertObject(persistenceId, revision, value, tag));
    }

    /**
     * @param persistenceId the persistence id
     * @return as {@link LatticeDurableStateStore#deleteObject(String)}
     * @deprecated as in Pekko: use {@link #deleteObject(String, long)}
     */
    @Override
    @Deprecated
    public Future<Done> deleteObject(String persistenceId) {
        return FutureConverters.asScala(store.deleteObject(persistenceId));
    }

    /**
     * @param persistenceId the persistence id
     * @param revision the revision
     * @return as {@link LatticeDurableStateStore#deleteObject(String, long)}
     */
    @Override
    public Future<Done> deleteObject(String persistenceId, long revision) {
        return FutureConverters.asScala(store.deleteObject(persistenceId, revision));
    }
}

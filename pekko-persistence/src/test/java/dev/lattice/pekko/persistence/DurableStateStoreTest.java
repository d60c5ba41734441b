package dev.lattice.pekko.persistence;

import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.persistence.state.DurableStateStoreRegistry;
import org.apache.pekko.persistence.state.exception.DeleteRevisionException;
import org.apache.pekko.persistence.state.javadsl.DurableStateUpdateStore;
import org.apache.pekko.persistence.state.javadsl.GetObjectResult;
import org.apache.pekko.testkit.javadsl.TestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The durable state store's contract (Pekko 1.7.0's TCK has no durable state spec) on every provider, through the
 * store Pekko's registry returns for the plugin id: revisions, optimistic concurrency, deletes, serialization.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DurableStateStoreTest {

    private final Map<TestProviders.Kind, ActorSystem> systems = new EnumMap<>(TestProviders.Kind.class);

    @BeforeAll
    void noSystemsYet() {
        systems.clear();
    }

    @AfterAll
    void stop() {
        systems.values().forEach(TestKit::shutdownActorSystem);
    }

    @SuppressWarnings("unchecked")
    private DurableStateUpdateStore<Object> store(TestProviders.Kind kind) {
        ActorSystem s = systems.computeIfAbsent(kind, k -> ActorSystem.create("state-" + k.name().toLowerCase()
                .replace('_', '-'), TestProviders.config(k, "state")));
        return (DurableStateUpdateStore<Object>) DurableStateStoreRegistry.get(s)
                .getDurableStateStoreFor(DurableStateUpdateStore.class, "lattice.persistence.state");
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> f) {
        try {
            return f.toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new CompletionException(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest
    @EnumSource(TestProviders.Kind.class)
    void revisionsAdvanceOneByOneAndStaleWritesAreRefused(TestProviders.Kind kind) {
        DurableStateUpdateStore<Object> st = store(kind);
        String pid = "cart-" + kind;
        GetObjectResult<Object> none = await(st.getObject(pid));
        assertThat(none.value()).isEmpty();
        assertThat(none.revision()).isZero();

        await(st.upsertObject(pid, 1, "v1", "tag"));
        await(st.upsertObject(pid, 2, "v2", ""));
        GetObjectResult<Object> r = await(st.getObject(pid));
        assertThat(r.value()).contains("v2");
        assertThat(r.revision()).isEqualTo(2);

        assertThatThrownBy(() -> await(st.upsertObject(pid, 2, "stale", "")))
                .hasCauseInstanceOf(RevisionMismatchException.class);
        assertThatThrownBy(() -> await(st.upsertObject(pid, 4, "gap", "")))
                .hasCauseInstanceOf(RevisionMismatchException.class);
        assertThatThrownBy(() -> await(st.upsertObject("new-" + pid, 2, "no revision 1", "")))
                .hasCauseInstanceOf(RevisionMismatchException.class);
        assertThat(await(st.getObject(pid)).value()).contains("v2");
    }

    @ParameterizedTest
    @EnumSource(TestProviders.Kind.class)
    void ofRacingWritersOfOneRevisionExactlyOneWins(TestProviders.Kind kind) {
        DurableStateUpdateStore<Object> st = store(kind);
        String pid = "race-" + kind;
        await(st.upsertObject(pid, 1, "base", ""));
        List<CompletableFuture<?>> racers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            racers.add(st.upsertObject(pid, 2, "w" + i, "").toCompletableFuture());
        }
        int won = 0;
        for (CompletableFuture<?> f : racers) {
            try {
                f.get(60, TimeUnit.SECONDS);
                won++;
            } catch (java.util.concurrent.ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(RevisionMismatchException.class);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        assertThat(won).isEqualTo(1);
        GetObjectResult<Object> r = await(st.getObject(pid));
        assertThat(r.revision()).isEqualTo(2);
        assertThat((String) r.value().orElseThrow()).startsWith("w");
    }

    @ParameterizedTest
    @EnumSource(TestProviders.Kind.class)
    void deleteWithRevisionKeepsCountingAndTheDeprecatedDeleteResets(TestProviders.Kind kind) {
        DurableStateUpdateStore<Object> st = store(kind);
        String pid = "del-" + kind;
        await(st.upsertObject(pid, 1, "a", ""));
        assertThatThrownBy(() -> await(st.deleteObject(pid, 5))).hasCauseInstanceOf(DeleteRevisionException.class);
        await(st.deleteObject(pid, 2)); // what DurableStateBehavior sends: the stored revision + 1
        GetObjectResult<Object> gone = await(st.getObject(pid));
        assertThat(gone.value()).isEmpty();
        assertThat(gone.revision()).isEqualTo(2);
        await(st.upsertObject(pid, 3, "back", ""));
        assertThat(await(st.getObject(pid)).value()).contains("back");

        await(st.deleteObject(pid));
        GetObjectResult<Object> reset = await(st.getObject(pid));
        assertThat(reset.value()).isEqualTo(Optional.empty());
        assertThat(reset.revision()).isZero();
        await(st.upsertObject(pid, 1, "again", ""));
        assertThat(await(st.getObject(pid)).revision()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(value = TestProviders.Kind.class, names = {"MEMORY", "POSTGRES"})
    void aNonSerializableObjectFailsItsUpsertAndWritesNothing(TestProviders.Kind kind) {
        DurableStateUpdateStore<Object> st = store(kind);
        String pid = "ser-" + kind;
        await(st.upsertObject(pid, 1, "ok", ""));
        assertThatThrownBy(() -> await(st.upsertObject(pid, 2, new Object(), ""))).isInstanceOf(CompletionException.class);
        GetObjectResult<Object> r = await(st.getObject(pid));
        assertThat(r.value()).contains("ok");
        assertThat(r.revision()).isEqualTo(1);
    }
}

package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.testkit.javadsl.TestKit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two actor systems, each with its own Lattice on the same provider storage, write the same persistence id: the
 * second opener fences the first, whose later writes are refused (rejected or failed, never acknowledged); the
 * first writer's acknowledged events stay intact and the journal never holds an interleaving. On Chronicle, whose
 * provider locks its directory, the second opener is rejected and the first keeps writing.
 */
class TwoWritersTest {

    @ParameterizedTest
    @EnumSource(value = TestProviders.Kind.class, names = {"MEMORY", "CHRONICLE", "POSTGRES"})
    void theSecondWriterFencesTheFirstAndTheAcknowledgedEventsStay(TestProviders.Kind kind) {
        Config config = TestProviders.config(TestProviders.fresh(kind, "twowriters"));
        ActorSystem a = ActorSystem.create("writerA", config);
        ActorSystem b = null;
        ActorSystem c = null;
        try {
            JournalProbe ja = new JournalProbe(a, "A");
            assertThat(ja.write("acct", List.of(List.of(1L, 2L), List.of(3L), List.of(4L, 5L))))
                    .containsOnly("ok").hasSize(5);

            b = ActorSystem.create("writerB", config);
            if (kind == TestProviders.Kind.CHRONICLE) {
                // Chronicle locks its directory: the second opener is rejected outright, the first keeps writing
                ActorSystem second = b;
                assertThatThrownBy(() -> LatticeConnections.get(second).lattice("lattice.persistence.connection"))
                        .hasMessageContaining("locked");
                assertThat(ja.write("acct", List.of(List.of(6L)))).containsExactly("ok");
                TestKit.shutdownActorSystem(a);
                c = ActorSystem.create("reader", config);
                assertThat(new JournalProbe(c, "C").replay("acct", 1, Long.MAX_VALUE)).containsExactly("1:A-1",
                        "2:A-2", "3:A-3", "4:A-4", "5:A-5", "6:A-6", "highest=6");
                return;
            }
            JournalProbe jb = new JournalProbe(b, "B");
            List<String> seenByB = jb.replay("acct", 1, Long.MAX_VALUE);
            assertThat(seenByB).containsExactly("1:A-1", "2:A-2", "3:A-3", "4:A-4", "5:A-5", "highest=5");
            assertThat(jb.write("acct", List.of(List.of(6L, 7L)))).containsExactly("ok", "ok");

            // A still believes it owns the id: its next write must not be acknowledged
            List<String> late = ja.write("acct", List.of(List.of(6L), List.of(7L, 8L)));
            assertThat(late).doesNotContain("ok");

            // B may go on writing
            assertThat(jb.write("acct", List.of(List.of(8L)))).containsExactly("ok");

            c = ActorSystem.create("reader", config);
            List<String> all = new JournalProbe(c, "C").replay("acct", 1, Long.MAX_VALUE);
            assertThat(all).containsExactly("1:A-1", "2:A-2", "3:A-3", "4:A-4", "5:A-5", "6:B-6", "7:B-7", "8:B-8",
                    "highest=8");
        } finally {
            List<ActorSystem> systems = new ArrayList<>();
            systems.add(a);
            if (b != null) {
                systems.add(b);
            }
            if (c != null) {
                systems.add(c);
            }
            systems.forEach(TestKit::shutdownActorSystem);
        }
    }
}

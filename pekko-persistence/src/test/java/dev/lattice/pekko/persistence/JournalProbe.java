package dev.lattice.pekko.persistence;

import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.persistence.AtomicWrite;
import org.apache.pekko.persistence.JournalProtocol;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.PersistentEnvelope;
import org.apache.pekko.persistence.PersistentRepr;
import org.apache.pekko.testkit.javadsl.TestKit;
import scala.jdk.javaapi.CollectionConverters;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Talks Pekko's journal protocol to a system's default journal, for tests. Not thread-safe. */
final class JournalProbe {

    private final ActorSystem system;
    private final ActorRef journal;
    private final TestKit probe;
    private final String writerUuid;

    JournalProbe(ActorSystem system, String writerUuid) {
        this.system = system;
        this.journal = Persistence.get(system).journalFor(null, com.typesafe.config.ConfigFactory.empty());
        this.probe = new TestKit(system);
        this.writerUuid = writerUuid;
    }

    /**
     * Writes one AtomicWrite per list element.
     *
     * @return per event: "ok", "rejected" or "failed", in order
     */
    List<String> write(String pid, List<List<Long>> writes) {
        List<PersistentEnvelope> envs = new ArrayList<>();
        int events = 0;
        for (List<Long> w : writes) {
            List<PersistentRepr> reprs = new ArrayList<>();
            for (long seq : w) {
                reprs.add(PersistentRepr.apply(writerUuid + "-" + seq, seq, pid, "", false, ActorRef.noSender(),
                        writerUuid));
                events++;
            }
            envs.add(AtomicWrite.apply(CollectionConverters.asScala(reprs).toList()));
        }
        journal.tell(new JournalProtocol.WriteMessages(CollectionConverters.asScala(envs).toList(), probe.getRef(), 1),
                ActorRef.noSender());
        List<String> out = new ArrayList<>();
        Object first = probe.receiveOne(Duration.ofSeconds(30));
        boolean batchFailed = first instanceof JournalProtocol.WriteMessagesFailed;
        for (int i = 0; i < events; i++) {
            Object m = probe.receiveOne(Duration.ofSeconds(30));
            if (m instanceof JournalProtocol.WriteMessageSuccess) {
                out.add("ok");
            } else if (m instanceof JournalProtocol.WriteMessageRejected) {
                out.add("rejected");
            } else if (m instanceof JournalProtocol.WriteMessageFailure) {
                out.add("failed");
            } else {
                throw new AssertionError("unexpected reply " + m + " (batch failed: " + batchFailed + ")");
            }
        }
        return out;
    }

    /** @return the payloads replayed for [from, to], then "highest=N" */
    List<String> replay(String pid, long from, long to) {
        journal.tell(new JournalProtocol.ReplayMessages(from, to, Long.MAX_VALUE, pid, probe.getRef()),
                ActorRef.noSender());
        List<String> out = new ArrayList<>();
        while (true) {
            Object m = probe.receiveOne(Duration.ofSeconds(60));
            if (m instanceof JournalProtocol.ReplayedMessage r) {
                out.add(r.persistent().sequenceNr() + ":" + r.persistent().payload());
            } else if (m instanceof JournalProtocol.RecoverySuccess s) {
                out.add("highest=" + s.highestSequenceNr());
                return out;
            } else {
                throw new AssertionError("unexpected reply " + m);
            }
        }
    }

    /** Deletes up to {@code to} and waits for the confirmation. */
    void delete(String pid, long to) {
        journal.tell(new JournalProtocol.DeleteMessagesTo(pid, to, probe.getRef()), ActorRef.noSender());
        Object m = probe.receiveOne(Duration.ofSeconds(120));
        if (!(m instanceof org.apache.pekko.persistence.DeleteMessagesSuccess)) {
            throw new AssertionError("delete failed: " + m);
        }
    }
}

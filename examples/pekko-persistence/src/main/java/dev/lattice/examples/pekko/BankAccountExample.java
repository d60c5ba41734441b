package dev.lattice.examples.pekko;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.pattern.Patterns;
import org.apache.pekko.persistence.AbstractPersistentActor;
import org.apache.pekko.persistence.SnapshotOffer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An event-sourced bank account (a classic Pekko {@code AbstractPersistentActor}) whose events and snapshots live in
 * Lattice: deposits are persisted as events (amounts, {@code Long}), every 5th event a snapshot of the balance is
 * saved, and a restarted actor system recovers the balance from the snapshot plus the later events.
 *
 * <p>Run: {@code BankAccountExample [providerUri]}, default {@code chronicle:./pekko-example-data}; for PostgreSQL e.g.
 * {@code postgres://127.0.0.1:5432/postgres?user=postgres&schema=bank}.
 */
public final class BankAccountExample {

    private BankAccountExample() {
    }

    /** Asks for the balance. */
    public static final class GetBalance {
        static final GetBalance INSTANCE = new GetBalance();
    }

    /** The account actor: commands are {@code Long} deposits and {@link GetBalance}. */
    static final class Account extends AbstractPersistentActor {
        private final String id;
        private long balance;

        Account(String id) {
            this.id = id;
        }

        @Override
        public String persistenceId() {
            return "account-" + id;
        }

        @Override
        public Receive createReceiveRecover() {
            return receiveBuilder()
                    .match(SnapshotOffer.class, s -> balance = (Long) s.snapshot())
                    .match(Long.class, amount -> balance += amount)
                    .build();
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Long.class, amount -> persist(amount, e -> {
                        balance += e;
                        if (lastSequenceNr() % 5 == 0) {
                            saveSnapshot(balance);
                        }
                        getSender().tell(balance, getSelf());
                    }))
                    .match(GetBalance.class, g -> getSender().tell(balance, getSelf()))
                    .build();
        }
    }

    /**
     * The actor system configuration using the Lattice journal and snapshot store on a provider.
     *
     * @param uri the provider URI
     * @param options provider options (e.g. a password)
     * @return the configuration
     */
    public static Config config(String uri, Map<String, String> options) {
        return ConfigFactory.parseString("""
                pekko.loglevel = WARNING
                pekko.persistence.journal.plugin = "lattice.persistence.journal"
                pekko.persistence.snapshot-store.plugin = "lattice.persistence.snapshot-store"
                """)
                .withValue("lattice.persistence.connection.uri", ConfigValueFactory.fromAnyRef(uri))
                .withValue("lattice.persistence.connection.options", ConfigValueFactory.fromMap(options))
                .withFallback(ConfigFactory.load());
    }

    /**
     * Deposits into an account in one actor system, then reads the balance back in a second one (recovery).
     *
     * @param uri the provider URI
     * @param options provider options
     * @param deposits the amounts to deposit
     * @return the balance the restarted actor recovered
     * @throws Exception if an ask times out or the actor system fails
     */
    public static long run(String uri, Map<String, String> options, long... deposits) throws Exception {
        Config config = config(uri, options);
        Duration timeout = Duration.ofSeconds(30);
        ActorSystem first = ActorSystem.create("bank", config);
        try {
            ActorRef account = first.actorOf(Props.create(Account.class, () -> new Account("42")));
            for (long d : deposits) {
                Object balance = Patterns.ask(account, d, timeout).toCompletableFuture().get(30, TimeUnit.SECONDS);
                System.out.println("deposited " + d + ", balance " + balance);
            }
        } finally {
            first.terminate();
            first.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        ActorSystem second = ActorSystem.create("bank", config);
        try {
            ActorRef account = second.actorOf(Props.create(Account.class, () -> new Account("42")));
            long balance = (Long) Patterns.ask(account, GetBalance.INSTANCE, timeout).toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            System.out.println("recovered balance " + balance);
            return balance;
        } finally {
            second.terminate();
            second.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * @param args optional provider URI
     * @throws Exception as {@link #run}
     */
    public static void main(String[] args) throws Exception {
        String uri = args.length > 0 ? args[0] : "chronicle:./pekko-example-data";
        run(uri, Map.of(), 10, 20, 30, 40, 50, 60, 70);
    }
}

package dev.lattice.pekko.persistence;

import org.junit.runner.Description;
import org.junit.runner.Runner;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunNotifier;
import org.scalatest.Args;
import org.scalatest.ConfigMap;
import org.scalatest.DynaTags;
import org.scalatest.Filter$;
import org.scalatest.Reporter;
import org.scalatest.Status;
import org.scalatest.Stopper;
import org.scalatest.Suite;
import org.scalatest.Tracker;
import org.scalatest.events.Event;
import org.scalatest.events.InfoProvided;
import org.scalatest.events.Ordinal;
import org.scalatest.events.SuiteAborted;
import org.scalatest.events.TestCanceled;
import org.scalatest.events.TestFailed;
import org.scalatest.events.TestIgnored;
import org.scalatest.events.TestPending;
import org.scalatest.events.TestStarting;
import org.scalatest.events.TestSucceeded;
import org.junit.AssumptionViolatedException;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * JUnit 4 runner for a ScalaTest suite (here: Pekko's TCK specs), so that surefire's JUnit Platform (vintage engine)
 * runs each ScalaTest test as one JUnit test and the counts land in the surefire reports. The suite class needs a
 * public no-argument constructor. Scope tests ({@code optional(...)} with a flag off) are reported as ignored by
 * ScalaTest itself; a suite abort (e.g. a failing {@code beforeAll}) is a failure of the class.
 */
public final class ScalaTestJUnitRunner extends Runner {

    private final Class<?> suiteClass;
    private final Description description;
    private final Map<String, Description> tests = new TreeMap<>();
    private final Suite suite;

    /**
     * @param suiteClass a {@link Suite} subclass with a public no-argument constructor
     * @throws IllegalArgumentException if it is not a ScalaTest suite
     */
    public ScalaTestJUnitRunner(Class<?> suiteClass) {
        if (!Suite.class.isAssignableFrom(suiteClass)) {
            throw new IllegalArgumentException(suiteClass + " is not a ScalaTest Suite");
        }
        this.suiteClass = suiteClass;
        this.description = Description.createSuiteDescription(suiteClass);
        // one instance: the TCK's constructor starts an actor system
        this.suite = newSuite();
        for (String name : CollectionConverters.asJava(suite.testNames())) {
            Description d = Description.createTestDescription(suiteClass, name);
            tests.put(name, d);
            description.addChild(d);
        }
    }

    private Suite newSuite() {
        try {
            return (Suite) suiteClass.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create " + suiteClass.getName(), e);
        }
    }

    @Override
    public Description getDescription() {
        return description;
    }

    @Override
    public void run(RunNotifier notifier) {
        Map<String, Boolean> finished = new ConcurrentHashMap<>();
        Reporter reporter = (Event e) -> report(e, notifier, finished);
        Stopper stopper = new Stopper() {
            private volatile boolean stop;

            @Override
            public boolean stopRequested() {
                return stop;
            }

            @Override
            public void requestStop() {
                stop = true;
            }
        };
        scala.collection.immutable.Set<String> noTags = scala.collection.immutable.Set$.MODULE$.empty();
        scala.collection.immutable.Set<String> exclude = noTags.incl("org.scalatest.Ignore");
        DynaTags dyna = new DynaTags(scala.collection.immutable.Map$.MODULE$.empty(),
                scala.collection.immutable.Map$.MODULE$.empty());
        Args args = new Args(reporter, stopper, Filter$.MODULE$.apply(Option.empty(), exclude, false, dyna),
                new ConfigMap(scala.collection.immutable.Map$.MODULE$.empty()), Option.empty(),
                new Tracker(new Ordinal(0)), noTags, false, Option.empty(), Option.empty());
        try {
            Status status = suite.run(Option.empty(), args);
            status.waitUntilCompleted();
        } catch (Throwable t) {
            notifier.fireTestFailure(new Failure(description, t));
        }
    }

    private void report(Event e, RunNotifier notifier, Map<String, Boolean> finished) {
        if (e instanceof TestStarting s) {
            notifier.fireTestStarted(test(s.testName()));
        } else if (e instanceof TestSucceeded s) {
            notifier.fireTestFinished(test(s.testName()));
        } else if (e instanceof TestFailed f) {
            Throwable t = f.throwable().isDefined() ? f.throwable().get() : new AssertionError(f.message());
            notifier.fireTestFailure(new Failure(test(f.testName()), t));
            notifier.fireTestFinished(test(f.testName()));
        } else if (e instanceof TestIgnored i) {
            notifier.fireTestIgnored(test(i.testName()));
        } else if (e instanceof TestPending p) {
            notifier.fireTestAssumptionFailed(new Failure(test(p.testName()),
                    new AssumptionViolatedException("pending")));
            notifier.fireTestFinished(test(p.testName()));
        } else if (e instanceof TestCanceled c) {
            notifier.fireTestAssumptionFailed(new Failure(test(c.testName()),
                    new AssumptionViolatedException(c.message())));
            notifier.fireTestFinished(test(c.testName()));
        } else if (e instanceof SuiteAborted a) {
            Throwable t = a.throwable().isDefined() ? a.throwable().get() : new AssertionError(a.message());
            notifier.fireTestFailure(new Failure(description, t));
        } else if (e instanceof InfoProvided i) {
            System.out.println("[" + suiteClass.getSimpleName() + "] " + i.message());
        }
    }

    private Description test(String name) {
        return tests.computeIfAbsent(name, n -> Description.createTestDescription(suiteClass, n));
    }
}

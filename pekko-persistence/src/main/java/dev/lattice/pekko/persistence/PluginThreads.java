package dev.lattice.pekko.persistence;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads a plugin runs its blocking Lattice calls on (never Pekko's dispatcher threads): daemon threads named
 * after the plugin.
 *
 * <p>Thread-safe.
 */
final class PluginThreads {

    private PluginThreads() {
    }

    /**
     * @param name thread name prefix
     * @param threads the number of threads, at least 1 (idle threads end after 30 s)
     * @return a new executor with an unbounded queue, tasks run in submission order per thread
     */
    static ExecutorService pool(String name, int threads) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory f = r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        ThreadPoolExecutor e = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), f);
        e.allowCoreThreadTimeOut(true);
        return e;
    }
}

package dev.lattice.provider.chronicle;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * One provider instance per directory: a second instance, in this JVM or another process, fails at open with
 * {@link DirectoryLockedException} naming the lock file, and never disturbs the holder; the lock goes with
 * {@code close()} or with the holder's process (even after SIGKILL).
 */
class LockContentionTest {

    private static final LogId LOG = new LogId("locked", 0);
    private final Path dir = TestDirs.create("chronicle-lock");
    private final Path stderr = Path.of("target", "lock-child-stderr.txt");

    @AfterEach
    void cleanUp() {
        TestDirs.delete(dir);
    }

    private WalStorageProvider open() {
        return new ChronicleProviderFactory().open(URI.create("chronicle:" + dir), Map.of());
    }

    @Test
    void secondInstanceInTheSameJvmFailsAndTheHolderKeepsTheLock() throws Exception {
        try (WalStorageProvider first = open()) {
            Fence f = first.claim(LOG);
            Throwable t = catchThrowable(this::open);
            assertThat(t).isInstanceOf(DirectoryLockedException.class).isInstanceOf(ProviderUnavailableException.class)
                    .hasMessageContaining("locked by another provider instance in this JVM")
                    .hasMessageContaining(dir.toRealPath().resolve(RootLock.LOCK_FILE).toString());
            assertThat(((DirectoryLockedException) t).lockFile())
                    .isEqualTo(dir.toRealPath().resolve(RootLock.LOCK_FILE));
            // the failed attempt did not release the holder's OS lock: another process is still kept out
            try (ChildJvm child = ChildJvm.start(stderr, "hold-lock", dir.toString())) {
                child.process.getOutputStream().close();
                assertThat(child.process.waitFor()).as("child exit code").isNotZero();
                assertThat(child.all).noneMatch(l -> l.startsWith("LOCKED"));
            }
            first.append(LOG, f, Payloads.smallBatch(0, 2));
        }
        try (WalStorageProvider again = open()) {
            assertThat(again.state(LOG).committedTail()).isEqualTo(1);
        }
    }

    @Test
    void anotherProcessHoldingTheDirectoryFailsOpenWithItsPid() throws Exception {
        try (ChildJvm child = ChildJvm.start(stderr, "hold-lock", dir.toString())) {
            String pid = child.await("LOCKED", 60).split(" ")[1];
            assertThatThrownBy(this::open).isInstanceOf(DirectoryLockedException.class)
                    .hasMessageContaining("locked by another process (pid " + pid + ")")
                    .hasMessageContaining(RootLock.LOCK_FILE);
            child.process.getOutputStream().close(); // the child closes its provider when stdin ends
            child.await("RELEASED", 60);
            assertThat(child.process.waitFor()).isZero();
        }
        open().close();
    }

    @Test
    void sigkilledHolderReleasesTheLock() throws Exception {
        try (ChildJvm child = ChildJvm.start(stderr, "hold-lock", dir.toString())) {
            child.await("LOCKED", 60);
            assertThatThrownBy(this::open).isInstanceOf(DirectoryLockedException.class);
            child.kill();
        }
        try (WalStorageProvider p = open()) {
            assertThat(p.state(LOG).committedTail()).isEqualTo(-1);
        }
    }
}

package dev.lattice.provider.chronicle;

import net.openhft.chronicle.core.io.BackgroundResourceReleaser;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The queue rewrite of operator repair (repair part of the protocol, docs/providers/chronicle.md "Repair"): copies
 * the intact frames below the first damaged offset into a fresh queue ({@code queue.repair}), cutting a commit group
 * the damage split so it ends at the new tail, forces it, moves the damaged queue aside as
 * {@code queue.damaged-<ms>} and renames the fresh one into place. The records (tail, trim, checkpoints) are the
 * caller's ({@link LogStore#repair}).
 *
 * <p>Stateless; call under the log's lock.
 */
final class LogRepair {

    /**
     * What the rewrite did.
     *
     * @param copied frames copied
     * @param rewritten frames whose commit group end was lowered to the new tail
     * @param damaged where the damaged queue now is
     */
    record Result(int copied, int rewritten, Path damaged) {
    }

    private LogRepair() {
    }

    /**
     * Replaces the queue by a copy of its intact frames below {@code bad}.
     *
     * @param config the provider settings (to build the fresh queue)
     * @param dir the log directory
     * @param q the open queue (closed by {@code closeQueue} before the directories move)
     * @param frames the frame index
     * @param tail the committed tail (for the last frame's end)
     * @param bad the first damaged committed offset
     * @param closeQueue closes the log's open queue
     * @return what was copied and where the damaged queue went
     * @throws IOException if writing, forcing or moving fails (the damaged queue is then still in place or moved
     *                     aside with the fresh one not yet in place; a reload sees an empty or the old queue)
     */
    static Result rewrite(ChronicleConfig config, Path dir, LogQueue q, FrameIndex frames, long tail, long bad,
                          Runnable closeQueue) throws IOException {
        long tailAfter = bad - 1;
        Path queueDir = dir.resolve(LogStore.QUEUE_DIR);
        Path fresh = dir.resolve(LogStore.QUEUE_DIR + ".repair");
        Path damaged = dir.resolve(LogStore.QUEUE_DIR + ".damaged-" + System.currentTimeMillis());
        int copied = 0;
        int rewritten = 0;
        deleteTree(fresh);
        try (SingleChronicleQueue out = LogQueue.build(fresh, config)) {
            ExcerptAppender a = out.createAppender();
            a.singleThreadedCheckDisabled(true);
            for (int i = 0; i < frames.size() && frames.first(i) < bad; i++) {
                if (frames.chronicleIndex(i) == FrameIndex.CORRUPT) {
                    break;
                }
                byte[] doc = q.readFrame(frames.chronicleIndex(i), frames.first(i), frames.last(i, tail),
                        frames.first(i));
                if (Frames.readHeader(doc).groupThrough() > tailAfter) {
                    doc = Frames.withGroupThrough(doc, tailAfter);
                    rewritten++;
                }
                try (DocumentContext dc = a.writingDocument()) {
                    dc.wire().bytes().write(doc);
                }
                copied++;
            }
        }
        BackgroundResourceReleaser.releasePendingResources();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(fresh)) {
            for (Path p : ds) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
            }
        }
        SmallFiles.forceDirectory(fresh);
        closeQueue.run();
        if (Files.isDirectory(queueDir)) {
            Files.move(queueDir, damaged, StandardCopyOption.ATOMIC_MOVE);
        }
        Files.move(fresh, queueDir, StandardCopyOption.ATOMIC_MOVE);
        SmallFiles.forceDirectory(dir);
        return new Result(copied, rewritten, damaged);
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}

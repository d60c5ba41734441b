package dev.lattice.engine;

import dev.lattice.spi.LogId;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;

/**
 * The meters of one log's write path ({@link LogPipeline}): provider call timers, append latency, admission wait,
 * batch sizes, retries, checkpoints, trims, overdue calls, provider errors, and the gauges of its queue, batches in
 * flight, memtable and runs. All carry the tags {@code tree}, {@code partition} and {@code provider}.
 *
 * <p>Thread-safe (the meters are).
 */
final class PipelineMeters {

    final Tags tags;
    final Timer stage;
    final Timer commit;
    final Timer appendLatency;
    final Timer admissionWait;
    final DistributionSummary batchEntries;
    final DistributionSummary batchBytes;
    final Counter retries;
    final Timer checkpointDuration;
    final DistributionSummary checkpointBytes;
    final Counter trims;
    final Counter overdue;
    final Counter checkpointsRefused;
    private final EngineMeters m;
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * Registers the log's meters.
     *
     * @param queued the number of writes in the admission queue, for its gauge
     */
    PipelineMeters(EngineMeters m, LogId log, String providerKey, DoubleSupplier queued) {
        this.m = m;
        this.tags = m.tags("tree", log.tree(), "partition", Integer.toString(log.partition()), "provider", providerKey);
        this.stage = m.timer("lattice.append.stage", "provider stage calls", tags);
        this.commit = m.timer("lattice.append.commit", "provider commit calls", tags);
        this.appendLatency = m.timer("lattice.append.latency", "admission to completion of a write", tags);
        this.admissionWait = m.timer("lattice.admission.wait", "time writes waited for room in the admission queue",
                tags);
        this.batchEntries = m.summary("lattice.batch.entries", "entries per committed batch", "entries", tags);
        this.batchBytes = m.summary("lattice.batch.bytes", "bytes per committed batch", "bytes", tags);
        this.retries = m.counter("lattice.retries", "provider calls retried after a transient failure", "calls", tags);
        this.checkpointDuration = m.timer("lattice.checkpoint.duration", "checkpoint snapshot, upload and trim",
                tags);
        this.checkpointBytes = m.summary("lattice.checkpoint.bytes", "bytes per published checkpoint", "bytes", tags);
        this.trims = m.counter("lattice.trim", "log trims after a checkpoint", "trims", tags);
        this.overdue = m.counter("lattice.provider.overdue",
                "provider calls still running at their deadline (LatticeConfig providerCallTimeout)", "calls", tags);
        this.checkpointsRefused = m.counter("lattice.checkpoint.refused",
                "checkpoints not uploaded because they exceed the provider's maxCheckpointBytes", "checkpoints",
                tags.and("reason", "too_large"));
        m.gauge("lattice.inflight.batches", "batches staged and not yet committed", "batches", tags, inFlight::get);
        m.gauge("lattice.admission.queued", "writes waiting in the admission queue", "writes", tags, queued);
    }

    /** Sets the gauge of batches staged and not yet committed. */
    void inFlight(int batches) {
        inFlight.set(batches);
    }

    /** Registers the gauges of a partition that flushes into runs (once per log: a move keeps them). */
    void runGauges(PartitionState state) {
        m.gauge("lattice.memtable.bytes", "estimated bytes of the partition's memtable", "bytes", tags,
                () -> state.memtableBytes);
        m.gauge("lattice.runs", "live runs of the partition", "runs", tags,
                () -> state.layers.current().runs().size());
        m.gauge("lattice.runs.bytes", "bytes of the partition's live runs", "bytes", tags,
                () -> state.layers.current().runs().stream().mapToLong(h -> h.ref.lengthBytes()).sum());
        m.gauge("lattice.runs.resident.bytes", "heap bytes of the loaded block indexes and Bloom filters of the "
                + "partition's live runs", "bytes", tags,
                () -> state.layers.current().runs().stream().mapToLong(RunHandle::residentBytes).sum());
    }

    /** Counts a failed provider call by the failure's type. */
    void providerError(Throwable e) {
        m.counter("lattice.provider.errors", "failed provider calls by exception type", "errors",
                tags.and("type", e.getClass().getSimpleName())).increment();
    }
}

package dev.lattice.cluster;

import dev.lattice.engine.AtomicWriteAbortedException;
import dev.lattice.engine.LatticeException;
import dev.lattice.engine.LatticeSaturatedException;
import dev.lattice.engine.LatticeShuttingDownException;
import dev.lattice.engine.MemoryBudgetExceededException;
import dev.lattice.engine.NoSuchTreeException;
import dev.lattice.engine.OwnershipLostException;
import dev.lattice.engine.PartitionNotHostedException;
import dev.lattice.engine.WriteFailedException;
import dev.lattice.engine.WriteOutcomeUnknownException;
import dev.lattice.spi.LogId;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Typed errors across the wire: an entity's exception travels as its type name, message and details, and the
 * caller's node throws an exception of the same type (engine exceptions and the common JDK argument errors);
 * any other type arrives as a {@link LatticeException} naming the remote type. Stateless.
 */
final class RemoteErrors {

    private RemoteErrors() {
    }

    /** @return the failure response for {@code t} (its cause when it is a completion wrapper) */
    static Response toResponse(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        String tree = null;
        int partition = 0;
        long epoch = 0;
        if (t instanceof PartitionNotHostedException p) {
            tree = p.tree();
            partition = p.partition();
        } else if (t instanceof OwnershipLostException o) {
            tree = o.tree();
            partition = o.log().partition();
            epoch = o.epoch();
        } else if (t instanceof NoSuchTreeException n) {
            tree = n.tree();
        }
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        if (t instanceof dev.lattice.engine.PreconditionFailedException f) {
            tree = f.tree();
            message = f.key() + '\0' + f.expectedVersion() + '\0' + f.actualVersion();
        } else if (t instanceof dev.lattice.engine.AtomicWritePendingException a) {
            tree = a.coordinator().tree();
            partition = a.coordinator().partition();
            message = a.txnId() + '\0' + message;
        }
        return new Response(false, 0, false, null, null, null, null, t.getClass().getName(), message, tree,
                partition, epoch);
    }

    /** @return the exception a failure response stands for, of the remote exception's type where known */
    static RuntimeException toException(Response r) {
        String m = r.errorMessage();
        String type = r.errorType() == null ? "" : r.errorType();
        return switch (type) {
            case "dev.lattice.engine.PartitionNotHostedException" ->
                    new PartitionNotHostedException(r.errorTree(), r.errorPartition(), m);
            case "dev.lattice.engine.OwnershipLostException" ->
                    new OwnershipLostException(r.errorTree(), new LogId(r.errorTree(), r.errorPartition()),
                            r.errorEpoch(), null);
            case "dev.lattice.engine.NoSuchTreeException" -> new NoSuchTreeException(r.errorTree(), m);
            case "dev.lattice.engine.LatticeSaturatedException" -> new LatticeSaturatedException(m, null);
            case "dev.lattice.engine.LatticeShuttingDownException" -> new LatticeShuttingDownException(m);
            case "dev.lattice.engine.WriteFailedException" -> new WriteFailedException(m, null);
            case "dev.lattice.engine.WriteOutcomeUnknownException" -> new WriteOutcomeUnknownException(m, null);
            case "dev.lattice.engine.MemoryBudgetExceededException" -> new MemoryBudgetExceededException(m);
            case "dev.lattice.engine.AtomicWriteAbortedException" -> new AtomicWriteAbortedException(m, null);
            case "dev.lattice.engine.PreconditionFailedException" -> {
                String[] f = m.split("\0", 3);
                yield new dev.lattice.engine.PreconditionFailedException(r.errorTree(), f[0], Long.parseLong(f[1]),
                        Long.parseLong(f[2]));
            }
            case "dev.lattice.engine.AtomicWritePendingException" -> {
                String[] f = m.split("\0", 2);
                yield new dev.lattice.engine.AtomicWritePendingException(new LogId(r.errorTree(), r.errorPartition()),
                        f[0], new LogId(r.errorTree(), r.errorPartition()), 0);
            }
            case "dev.lattice.engine.ScanSessionLostException" -> new dev.lattice.engine.ScanSessionLostException(m);
            case "java.lang.IllegalArgumentException" -> new IllegalArgumentException(m);
            case "java.lang.IllegalStateException" -> new IllegalStateException(m);
            case "java.lang.NullPointerException" -> new NullPointerException(m);
            case "java.lang.UnsupportedOperationException" -> new UnsupportedOperationException(m);
            default -> new LatticeException("remote " + type + ": " + m);
        };
    }

    /**
     * @return true when the error proves the operation did nothing and a retry may succeed: the partition is not
     *     (or no longer) hosted there, its owner lost the claim before acting, or a read waited for an atomic write
     *     whose outcome its owner is now asking for
     */
    static boolean retryElsewhere(RuntimeException e) {
        return e instanceof PartitionNotHostedException || e instanceof OwnershipLostException
                || e instanceof dev.lattice.engine.AtomicWritePendingException;
    }
}

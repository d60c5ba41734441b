package dev.lattice.testbackends;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension giving tests the JVM's shared {@link DynaliteServer} (started lazily on first use, stopped by a
 * JVM shutdown hook). Use {@code @ExtendWith(DynaliteExtension.class)} and declare a {@code DynaliteServer} parameter
 * on a constructor, lifecycle method or test method, or call {@link DynaliteServer#shared()} directly.
 *
 * <p>The server starts before the class's tests run; if it cannot start, every test of the class fails with a
 * {@link BackendStartException} naming the command and its output (never a skip).
 *
 * <p>Stateless and thread-safe.
 */
public final class DynaliteExtension implements BeforeAllCallback, ParameterResolver {
    /** Creates the extension; JUnit calls this. */
    public DynaliteExtension() {
    }

    /**
     * Starts (or reuses) the shared server.
     *
     * @param context the class's context
     * @throws BackendStartException if the server cannot be started
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        DynaliteServer.shared();
    }

    /**
     * @return whether the parameter's type is {@link DynaliteServer}
     */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == DynaliteServer.class;
    }

    /**
     * @return the shared server
     * @throws BackendStartException if the server cannot be started
     */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return DynaliteServer.shared();
    }
}

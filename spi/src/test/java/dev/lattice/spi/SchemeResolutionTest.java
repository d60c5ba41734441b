package dev.lattice.spi;

import dev.lattice.spi.memory.InMemoryProviderFactory;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.support.Suggestions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Scheme resolution and its hints (issue 20 part 6): "did you mean" for a typo of a scheme on the classpath, the
 * real module for a first-party scheme that is missing (never an invented {@code lattice-provider-<typo>}), aliases
 * and the {@code jdbc:} prefix, and "did you mean" for unknown options.
 */
class SchemeResolutionTest {

    private static String failure(String uri) {
        try {
            Providers.open(uri).close();
        } catch (UnknownSchemeException e) {
            return e.getMessage();
        }
        throw new AssertionError("opened " + uri);
    }

    @Test
    void aTypoOfASchemeOnTheClasspathSuggestsIt() {
        String m = failure("memroy:x");
        assertThat(m).startsWith("no Lattice provider for scheme 'memroy' on the classpath; did you mean 'memory'?")
                .doesNotContain("lattice-provider-memroy").contains("[memory]");
    }

    @Test
    void aFirstPartySchemeThatIsMissingNamesItsRealModule() {
        // spi's own tests have only the memory provider on the classpath
        assertThat(failure("postgres://h/db")).contains("add dev.lattice:lattice-provider-postgres to the classpath");
        assertThat(failure("postgresql://h/db")).contains("add dev.lattice:lattice-provider-postgres");
        assertThat(failure("jdbc:postgresql://h:5432/db")).contains("scheme 'postgresql'")
                .contains("add dev.lattice:lattice-provider-postgres");
        assertThat(failure("chronicle:./data")).contains("add dev.lattice:lattice-provider-local-chronicle");
        assertThat(failure("azure-tables:t")).contains("dev.lattice:lattice-provider-azure-tables");
        assertThat(failure("postgress://h/db"))
                .contains("did you mean 'postgres' (module dev.lattice:lattice-provider-postgres, not on the classpath)?");
        for (String uri : List.of("postgres://h/db", "chronicle:x", "postgress://h/db", "jdbc:postgresql://h/db")) {
            assertThat(failure(uri)).doesNotContain("lattice-provider-jdbc").doesNotContain("lattice-provider-postgresql")
                    .doesNotContain("lattice-provider-chronicle ").doesNotContain("lattice-provider-postgress");
        }
    }

    @Test
    void anUnknownSchemeWithNothingCloseSaysHowAProviderIsFound() {
        String m = failure("nosuch:x");
        assertThat(m).contains("scheme 'nosuch'").contains("[memory]")
                .contains("META-INF/services/dev.lattice.spi.WalStorageProviderFactory")
                .doesNotContain("lattice-provider-nosuch").doesNotContain("did you mean");
    }

    /** A factory with an alias, found through a class loader whose services file names it. */
    public static final class AliasedFactory implements WalStorageProviderFactory {
        /** For ServiceLoader. */
        public AliasedFactory() {
        }

        @Override
        public String scheme() {
            return "aliased";
        }

        @Override
        public Set<String> aliases() {
            return Set.of("also-aliased");
        }

        @Override
        public WalStorageProvider open(URI uri, Map<String, String> options) {
            assertThat(uri.getScheme()).as("the factory sees only its own scheme").isEqualTo("aliased");
            return new InMemoryProviderFactory().open(URI.create("memory:" + uri.getSchemeSpecificPart()), options);
        }
    }

    private static <T> T withFactory(Path dir, Callable<T> body) throws Exception {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(WalStorageProviderFactory.class.getName()), AliasedFactory.class.getName());
        ClassLoader before = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader cl = new URLClassLoader(new URL[] {dir.toUri().toURL()},
                SchemeResolutionTest.class.getClassLoader())) {
            Thread.currentThread().setContextClassLoader(cl);
            return body.call();
        } finally {
            Thread.currentThread().setContextClassLoader(before);
        }
    }

    @Test
    void aliasesAndTheJdbcPrefixResolveToTheFactorysOwnScheme(@TempDir Path dir) throws Exception {
        withFactory(dir, () -> {
            assertThat(Providers.canonical(URI.create("also-aliased:n1?maxEntryBytes=64")))
                    .hasToString("aliased:n1?maxEntryBytes=64");
            assertThat(Providers.canonical(URI.create("jdbc:also-aliased:n1"))).hasToString("aliased:n1");
            assertThat(Providers.canonical(URI.create("aliased:n1"))).hasToString("aliased:n1");
            assertThat(Providers.factory("ALSO-ALIASED")).isInstanceOf(AliasedFactory.class);
            try (WalStorageProvider p = Providers.open(URI.create("also-aliased:scheme-alias-test?maxEntryBytes=64"),
                    Map.of())) {
                assertThat(p.describe().limits().maxEntryBytes()).isEqualTo(64);
            } finally {
                InMemoryStorage.dropNamed("scheme-alias-test");
            }
            // a typo of an alias is suggested too
            assertThatThrownBy(() -> Providers.open("also-alaised:x")).isInstanceOf(UnknownSchemeException.class)
                    .hasMessageContaining("did you mean 'also-aliased'?");
            return null;
        });
        assertThatThrownBy(() -> Providers.canonical(URI.create("jdbc:jdbc:memory:x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two jdbc: prefixes");
        assertThatThrownBy(() -> Providers.canonical(URI.create("jdbc:nothing-here")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no scheme");
    }

    @Test
    void unknownOptionsSuggestTheClosestKnownOne() {
        assertThatThrownBy(() -> Providers.open("memory:x?maxEntryByte=10")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option(s) [maxEntryByte]")
                .hasMessageContaining("did you mean 'maxEntryBytes'?");
        assertThatThrownBy(() -> Providers.open("memory:x?colour=blue")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option(s) [colour]").hasMessageNotContaining("did you mean");
    }

    @Test
    void suggestionsAreCloseNamesOnly() {
        assertThat(Suggestions.closest("memroy", List.of("memory", "chronicle", "postgres"))).containsExactly("memory");
        assertThat(Suggestions.closest("gett", List.of("get", "put", "scan", "demo"))).containsExactly("get");
        assertThat(Suggestions.closest("pt", List.of("get", "put"))).containsExactly("put");
        assertThat(Suggestions.closest("chron", List.of("chronicle", "memory"))).containsExactly("chronicle");
        assertThat(Suggestions.closest("xyz", List.of("memory", "chronicle"))).isEmpty();
        assertThat(Suggestions.closest("memory", List.of("memory"))).isEmpty();
        assertThat(Suggestions.didYouMean("scaz", List.of("scan", "scam"))).isEqualTo("; did you mean 'scam' or 'scan'?");
        assertThat(Suggestions.didYouMean("zzz", List.of("scan"))).isEmpty();
    }
}

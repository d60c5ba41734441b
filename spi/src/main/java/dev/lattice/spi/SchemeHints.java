package dev.lattice.spi;

import dev.lattice.spi.support.Suggestions;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The message of an {@link UnknownSchemeException}: a close scheme found on the classpath ("did you mean"), or the
 * Lattice module that provides a first-party scheme that is missing, or how a third-party provider is found.
 * Stateless and thread-safe.
 */
final class SchemeHints {

    /** First-party schemes (and aliases) and the artifact (group {@code dev.lattice}) that provides each. */
    static final Map<String, String> FIRST_PARTY;

    static {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("chronicle", "lattice-provider-local-chronicle");
        m.put("postgres", "lattice-provider-postgres");
        m.put("postgresql", "lattice-provider-postgres");
        m.put("azure-tables", "lattice-provider-azure-tables");
        m.put("azure-blob", "lattice-provider-azure-blob");
        m.put("dynamodb", "lattice-provider-dynamodb");
        m.put("memory", "lattice-spi");
        FIRST_PARTY = java.util.Collections.unmodifiableMap(m);
    }

    private SchemeHints() {
    }

    /**
     * @param scheme the scheme asked for (may be null)
     * @param found the schemes and aliases found on the classpath
     * @return the whole message
     */
    static String message(String scheme, Collection<String> found) {
        String list = " (schemes found on the classpath: " + new TreeSet<>(found) + ")";
        if (scheme == null || scheme.isEmpty()) {
            return "provider URI has no scheme; expected e.g. chronicle:./lattice-data" + list;
        }
        String head = "no Lattice provider for scheme '" + scheme + "' on the classpath";
        String artifact = FIRST_PARTY.get(scheme);
        if (artifact != null) {
            return head + "; add dev.lattice:" + artifact + " to the classpath" + list;
        }
        List<String> close = Suggestions.closest(scheme, found);
        if (!close.isEmpty()) {
            return head + Suggestions.didYouMean(scheme, found) + list;
        }
        TreeSet<String> missing = new TreeSet<>(FIRST_PARTY.keySet());
        missing.removeAll(found);
        List<String> closeMissing = Suggestions.closest(scheme, missing);
        if (!closeMissing.isEmpty()) {
            String s = closeMissing.get(0);
            return head + "; did you mean '" + s + "' (module dev.lattice:" + FIRST_PARTY.get(s)
                    + ", not on the classpath)?" + list;
        }
        return head + list + "; a provider is found through its jar on the classpath, which registers its scheme "
                + "in META-INF/services/" + WalStorageProviderFactory.class.getName();
    }
}

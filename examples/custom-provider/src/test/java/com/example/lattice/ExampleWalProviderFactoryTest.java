package com.example.lattice;

import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** The factory is found by its URI scheme through {@code ServiceLoader}. */
class ExampleWalProviderFactoryTest {

    @Test
    void openedByUri() {
        try (WalStorageProvider p = Providers.open("example:factory-test")) {
            assertInstanceOf(ExampleWalProvider.class, p);
            assertEquals("example", p.describe().name());
        }
    }
}

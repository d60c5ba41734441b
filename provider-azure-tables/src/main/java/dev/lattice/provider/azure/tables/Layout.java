package dev.lattice.provider.azure.tables;

/**
 * How payload bytes are spread over binary properties and rows: each row holds up to {@code propertiesPerRow}
 * binary properties {@code P00, P01, ...} of up to {@code propertyBytes} bytes each, filled in order. Readers do
 * not depend on it (they concatenate whatever properties a row has, in name order), so rows written with one layout
 * read back under another.
 *
 * <p>The default uses the service's maxima: 15 properties of 64 KiB = 960 KiB per row, which stays under the 1 MiB
 * entity limit with the keys and bookkeeping properties; three such rows fit one 4 MiB transaction as base64. Tests
 * use small layouts to reach the 100-entity transaction limit with small batches.
 *
 * @param propertyBytes bytes per binary property, 1 to {@link AzureTableLimits#MAX_BINARY_PROPERTY_BYTES}
 * @param propertiesPerRow binary properties per row, 1 to {@link #MAX_PROPERTIES_PER_ROW}
 */
record Layout(int propertyBytes, int propertiesPerRow) {
    /** Most payload properties per row: 15 x 64 KiB plus bookkeeping stays below 1 MiB per entity. */
    static final int MAX_PROPERTIES_PER_ROW = 15;
    /** The layout the provider writes with unless a test chooses another. */
    static final Layout DEFAULT = new Layout(AzureTableLimits.MAX_BINARY_PROPERTY_BYTES, MAX_PROPERTIES_PER_ROW);

    Layout {
        if (propertyBytes < 1 || propertyBytes > AzureTableLimits.MAX_BINARY_PROPERTY_BYTES) {
            throw new IllegalArgumentException("propertyBytes must be in 1.."
                    + AzureTableLimits.MAX_BINARY_PROPERTY_BYTES + ", got " + propertyBytes);
        }
        if (propertiesPerRow < 1 || propertiesPerRow > MAX_PROPERTIES_PER_ROW) {
            throw new IllegalArgumentException("propertiesPerRow must be in 1.." + MAX_PROPERTIES_PER_ROW + ", got "
                    + propertiesPerRow);
        }
    }

    /** @return payload bytes one row holds */
    int rowBytes() {
        return propertyBytes * propertiesPerRow;
    }

    /**
     * @param streamBytes bytes to store, {@code >= 0}
     * @return rows needed: at least 1 for a non-empty stream, 0 for an empty one
     */
    int rowsFor(long streamBytes) {
        long rows = (streamBytes + rowBytes() - 1) / rowBytes();
        if (rows > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(streamBytes + " bytes need too many rows");
        }
        return (int) rows;
    }
}

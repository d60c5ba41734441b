package dev.lattice.engine;

/**
 * Called when a tree's {@link SaturationState} changes. Called on an engine thread: return quickly and never
 * block or write to the tree from the callback.
 */
@FunctionalInterface
public interface SaturationListener {

    /**
     * Called when a tree's saturation state changes.
     *
     * @param tree the tree's name
     * @param previous the state before
     * @param current the state now
     */
    void onChange(String tree, SaturationState previous, SaturationState current);
}

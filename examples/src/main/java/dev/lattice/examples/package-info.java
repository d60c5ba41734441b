/**
 * Runnable examples to copy from; each has a {@code main} and is run by the build (ExamplesTest).
 */
package dev.lattice.examples;

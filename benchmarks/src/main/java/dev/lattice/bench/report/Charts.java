package dev.lattice.bench.report;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Grouped bar charts written as PNG with JFreeChart (headless). Stateless. */
public final class Charts {

    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
        new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b)};

    private Charts() {
    }

    /**
     * A dataset to fill: {@code add(value, series, category)}.
     *
     * @return an empty dataset
     */
    public static DefaultCategoryDataset dataset() {
        return new DefaultCategoryDataset();
    }

    /**
     * Writes a grouped bar chart.
     *
     * @param file the PNG to write (parent directories are created)
     * @param title the chart title
     * @param categoryLabel the x axis label
     * @param valueLabel the y axis label, with its unit
     * @param data the values: one bar group per category, one colour per series
     * @param logScale true for a logarithmic value axis fitted to the data (values must be positive)
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void bars(Path file, String title, String categoryLabel, String valueLabel,
                            DefaultCategoryDataset data, boolean logScale) {
        draw(file, title, categoryLabel, valueLabel, data, logScale, false);
    }

    /**
     * Writes a grouped bar chart of ratios: logarithmic axis, bars start at 1.0 (up: above 1, down: below 1).
     *
     * @param file the PNG to write (parent directories are created)
     * @param title the chart title
     * @param categoryLabel the x axis label
     * @param valueLabel the y axis label
     * @param data positive ratios
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void ratioBars(Path file, String title, String categoryLabel, String valueLabel,
                                 DefaultCategoryDataset data) {
        draw(file, title, categoryLabel, valueLabel, data, true, true);
    }

    private static void draw(Path file, String title, String categoryLabel, String valueLabel,
                             DefaultCategoryDataset data, boolean logScale, boolean ratio) {
        if (logScale) {
            // a log axis cannot show zero, negative or missing values: leave those bars out
            for (int i = 0; i < data.getRowCount(); i++) {
                for (int j = 0; j < data.getColumnCount(); j++) {
                    Number n = data.getValue(i, j);
                    if (n != null && !(n.doubleValue() > 0 && Double.isFinite(n.doubleValue()))) {
                        data.setValue(null, data.getRowKey(i), data.getColumnKey(j));
                    }
                }
            }
        }
        System.setProperty("java.awt.headless", "true");
        JFreeChart chart = ChartFactory.createBarChart(title, categoryLabel, valueLabel, data,
                PlotOrientation.VERTICAL, true, false, false);
        chart.setBackgroundPaint(Color.WHITE);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        BarRenderer r = (BarRenderer) plot.getRenderer();
        if (logScale) {
            org.jfree.chart.axis.LogAxis axis = new org.jfree.chart.axis.LogAxis(valueLabel);
            axis.setSmallestValue(1e-6);
            // ratios: ticks at powers of 2 (0.25, 0.5, 1, 2, 4); values: powers of 10; plain numbers either way
            axis.setBase(ratio ? 2 : 10);
            axis.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1));
            axis.setNumberFormatOverride(new java.text.DecimalFormat("#,##0.###"));
            plot.setRangeAxis(axis);
            if (ratio) {
                r.setBase(1.0);
                r.setIncludeBaseInRange(true);
            } else {
                r.setIncludeBaseInRange(false);
                double min = Double.MAX_VALUE;
                for (int i = 0; i < data.getRowCount(); i++) {
                    for (int j = 0; j < data.getColumnCount(); j++) {
                        Number n = data.getValue(i, j);
                        if (n != null && n.doubleValue() > 0) {
                            min = Math.min(min, n.doubleValue());
                        }
                    }
                }
                r.setBase(min == Double.MAX_VALUE ? 1e-6 : min / 2);
            }
            axis.setAutoRange(true);
        }
        if (ratio) {
            plot.addRangeMarker(new org.jfree.chart.plot.ValueMarker(1.0, Color.DARK_GRAY,
                    new java.awt.BasicStroke(1.5f)));
        }
        CategoryAxis x = plot.getDomainAxis();
        if (data.getColumnCount() > 6) {
            x.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        }
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        r.setItemMargin(0.05);
        for (int i = 0; i < data.getRowCount(); i++) {
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            ChartUtils.saveChartAsPNG(file.toFile(), chart, 900, 480);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write chart " + file, e);
        }
    }
}

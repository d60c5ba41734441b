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
     * @param logScale true for a logarithmic value axis (values must be positive)
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void bars(Path file, String title, String categoryLabel, String valueLabel,
                            DefaultCategoryDataset data, boolean logScale) {
        System.setProperty("java.awt.headless", "true");
        JFreeChart chart = ChartFactory.createBarChart(title, categoryLabel, valueLabel, data,
                PlotOrientation.VERTICAL, true, false, false);
        chart.setBackgroundPaint(Color.WHITE);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        if (logScale) {
            org.jfree.chart.axis.LogAxis axis = new org.jfree.chart.axis.LogAxis(valueLabel);
            axis.setSmallestValue(1e-3);
            plot.setRangeAxis(axis);
        }
        CategoryAxis x = plot.getDomainAxis();
        if (data.getColumnCount() > 6) {
            x.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        }
        BarRenderer r = (BarRenderer) plot.getRenderer();
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

package io.gpudirect.bench;

import io.gpudirect.server.BlockServer;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The plot of docs/benchmarks.md: our fetch's throughput against the number of streams (with
 * the raw socket at the same stream counts beside it) and against the chunk size, measured
 * here and now, points interleaved. Prints the figures as CSV too.
 *
 * <p>Arguments: output.png [seconds per point, default 2] [file size, default 256m].
 */
public final class ThroughputPlot {
  private static final List<Integer> STREAMS = List.of(1, 2, 4, 8, 16);
  private static final List<Integer> CHUNKS = List.of(256 << 10, 1 << 20, 4 << 20, 16 << 20);

  private ThroughputPlot() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    Path png = Path.of(args[0]);
    double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2;
    long size = args.length > 2 ? Sizes.parse(args[2]) : 256L << 20;
    Path dir = Files.createTempDirectory("gpudirect-plot");
    Path file = dir.resolve("fetch.bin");
    XYSeries ours = new XYSeries("gpudirect, CRC32C on");
    XYSeries oursNoCrc = new XYSeries("gpudirect, CRC32C off");
    XYSeries raw = new XYSeries("raw socket (sendfile)");
    XYSeries byChunk1 = new XYSeries("gpudirect, 1 stream");
    XYSeries byChunk4 = new XYSeries("gpudirect, 4 streams");
    System.out.println("what,streams,chunk_bytes,gbit_per_s,cpu_s_per_gb");
    try {
      BenchCommand.writeRandom(file, size);
      try (BlockServer server = BlockServer.builder().root(dir).bindAddress("127.0.0.1").port(0).build()) {
        server.start();
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
        for (int s : STREAMS) {
          ours.add(s, point("ours", s, 4 << 20, OurFetch.run(address, "fetch.bin", size, OurFetch.config(s, 4 << 20, true), seconds)));
          raw.add(s, point("raw", s, 0, RawSocketBaseline.stream(file, s, seconds)));
          oursNoCrc.add(s, point("ours-nocrc", s, 4 << 20, OurFetch.run(address, "fetch.bin", size, OurFetch.config(s, 4 << 20, false), seconds)));
        }
        for (int c : CHUNKS) {
          byChunk1.add(c / (double) (1 << 20), point("ours", 1, c, OurFetch.run(address, "fetch.bin", size, OurFetch.config(1, c, true), seconds)));
          byChunk4.add(c / (double) (1 << 20), point("ours", 4, c, OurFetch.run(address, "fetch.bin", size, OurFetch.config(4, c, true), seconds)));
        }
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
    JFreeChart byStreams = ChartFactory.createXYLineChart("Throughput vs streams (4 MiB chunks)", "streams",
        "Gbit/s", collection(ours, oursNoCrc, raw), PlotOrientation.VERTICAL, true, false, false);
    JFreeChart byChunk = ChartFactory.createXYLineChart("Throughput vs chunk size", "chunk size (MiB)",
        "Gbit/s", collection(byChunk1, byChunk4), PlotOrientation.VERTICAL, true, false, false);
    ((XYPlot) byStreams.getPlot()).setDomainAxis(powersOfTwo("streams"));
    ((XYPlot) byChunk.getPlot()).setDomainAxis(powersOfTwo("chunk size (MiB)"));
    for (JFreeChart chart : List.of(byStreams, byChunk)) {
      chart.setBackgroundPaint(Color.WHITE);
      ((XYPlot) chart.getPlot()).getRenderer().setDefaultStroke(new java.awt.BasicStroke(2f));
      ((org.jfree.chart.renderer.xy.XYLineAndShapeRenderer) ((XYPlot) chart.getPlot()).getRenderer())
          .setDefaultShapesVisible(true);
    }
    BufferedImage image = new BufferedImage(1400, 520, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, 1400, 520);
    byStreams.draw(g, new Rectangle2D.Double(0, 0, 700, 520));
    byChunk.draw(g, new Rectangle2D.Double(700, 0, 700, 520));
    g.dispose();
    ImageIO.write(image, "png", png.toFile());
    System.err.println("Wrote " + png);
  }

  /** A log2 axis with a tick at each power of two, labelled as plain numbers (1, 2, 4; 0.25 MiB). */
  private static LogAxis powersOfTwo(String label) {
    LogAxis axis = new LogAxis(label);
    axis.setBase(2);
    axis.setAutoTickUnitSelection(false);
    axis.setTickUnit(new NumberTickUnit(1));
    axis.setNumberFormatOverride(new DecimalFormat("0.##", DecimalFormatSymbols.getInstance(Locale.ROOT)));
    axis.setMinorTickMarksVisible(false);
    axis.setLowerMargin(0.05);
    axis.setUpperMargin(0.05);
    return axis;
  }

  private static double point(String what, int streams, int chunk, Measurement m) {
    System.out.printf(Locale.ROOT, "%s,%d,%d,%.3f,%.3f%n", what, streams, chunk, m.gbitPerSecond(), m.cpuSecondsPerGb());
    return m.gbitPerSecond();
  }

  private static XYSeriesCollection collection(XYSeries... series) {
    XYSeriesCollection c = new XYSeriesCollection();
    for (XYSeries s : series) {
      c.addSeries(s);
    }
    return c;
  }
}

package io.gpudirect.spark.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.spark.plan.ParquetSlice;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The footer rewrite behind output=gpu, checked with parquet-mr as the reader: a file followed
 * by a slice's footer must read as exactly the slice's row groups, and the slices of a file
 * together give every record once, in order.
 */
class SliceFooterTest {
  @TempDir Path dir;

  @Test
  void eachSliceReadsAsItsOwnRowGroupsAndTogetherTheyGiveTheFile() throws IOException {
    Path file = MultiRowGroupFile.write(dir.resolve("trips.parquet"));
    List<BlockMetaData> blocks = footer(file).getBlocks();
    assertTrue(blocks.size() >= 4, "the file has several row groups: " + blocks.size());
    List<String> all = records(file);

    for (int per : new int[] {1, 2, 3}) {
      List<String> fromSlices = new ArrayList<>();
      for (int first = 0; first < blocks.size(); first += per) {
        int n = Math.min(per, blocks.size() - first);
        BlockMetaData last = blocks.get(first + n - 1);
        long start = blocks.get(first).getStartingPos();
        long rows = 0;
        for (int i = first; i < first + n; i++) {
          rows += blocks.get(i).getRowCount();
        }
        ParquetSlice slice = new ParquetSlice(dataFile(file), start,
            last.getStartingPos() + last.getCompressedSize() - start, n, rows, null, Map.of(), "test");
        Path view = dir.resolve("view-" + per + "-" + first + ".parquet");
        byte[] tail = SliceFooter.of(local(file), slice).tail;
        Files.write(view, Files.readAllBytes(file));
        Files.write(view, tail, java.nio.file.StandardOpenOption.APPEND);

        List<BlockMetaData> seen = footer(view).getBlocks();
        assertEquals(n, seen.size(), "row groups of slice " + first + "+" + n);
        assertEquals(blocks.get(first).getStartingPos(), seen.get(0).getStartingPos());
        fromSlices.addAll(records(view));
      }
      assertEquals(all, fromSlices, "slices of " + per + " row groups give every record once, in order");
    }
  }

  @Test
  void theFileColumnsAreListedInFileOrder() throws IOException {
    Path file = MultiRowGroupFile.write(dir.resolve("t.parquet"));
    long size = Files.size(file);
    SliceFooter f = SliceFooter.of(local(file), new ParquetSlice(dataFile(file), 0, size, 1, 1, null, Map.of(), "t"));
    assertEquals(List.of("id", "amount", "zone", "day"), new ArrayList<>(f.columns.keySet()));
  }

  @Test
  void aFileWithoutAParquetFooterIsRefusedByName() throws IOException {
    Path bad = Files.write(dir.resolve("bad.parquet"), new byte[64]);
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> SliceFooter.of(local(bad),
        new ParquetSlice(dataFile(bad), 0, 64, 1, 1, null, Map.of(), "t")));
    assertTrue(e.getMessage().contains("bad.parquet") && e.getMessage().contains("PAR1"), e.getMessage());
    Path tooLong = dir.resolve("long.parquet");
    byte[] b = new byte[64];
    b[56] = (byte) 0xff; // a footer length far past the file
    System.arraycopy("PAR1".getBytes(), 0, b, 60, 4);
    Files.write(tooLong, b);
    e = assertThrows(GpuDirectException.class, () -> SliceFooter.of(local(tooLong),
        new ParquetSlice(dataFile(tooLong), 0, 64, 1, 1, null, Map.of(), "t")));
    assertTrue(e.getMessage().contains("footer claims"), e.getMessage());
  }

  private static DataFile dataFile(Path p) throws IOException {
    return new DataFile(GpuDirectUri.parse("gpudirect://127.0.0.1:7337/" + p.getFileName()), Files.size(p),
        io.gpudirect.protocol.FileVersion.ANY, DataFormat.PARQUET);
  }

  private static SliceFooter.FileBytes local(Path p) {
    return new SliceFooter.FileBytes() {
      @Override
      public long size() {
        return p.toFile().length();
      }

      @Override
      public byte[] read(long offset, int length) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "r")) {
          byte[] out = new byte[length];
          f.seek(offset);
          f.readFully(out);
          return out;
        }
      }
    };
  }

  private static org.apache.parquet.hadoop.metadata.ParquetMetadata footer(Path p) throws IOException {
    try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(
        new org.apache.hadoop.fs.Path(p.toUri()), new Configuration(false)))) {
      return r.getFooter();
    }
  }

  private static List<String> records(Path p) throws IOException {
    List<String> out = new ArrayList<>();
    try (ParquetReader<Group> r = ParquetReader.builder(new GroupReadSupport(), new org.apache.hadoop.fs.Path(p.toUri()))
        .withConf(new Configuration(false)).build()) {
      for (Group g = r.read(); g != null; g = r.read()) {
        out.add(g.toString());
      }
    }
    return out;
  }
}

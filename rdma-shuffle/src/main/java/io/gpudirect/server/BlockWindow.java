package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.PartitionChecksums;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.server.RootDirectory.FoundFile;
import io.gpudirect.server.ShuffleDirectories.Placed;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The window of a shuffle block a SHUFFLE_READ asks for, found and checked, whatever carries
 * its bytes (TCP's {@link ShuffleAnswers}, the queue pair's {@link RdmaServedFiles}): the map
 * output's index and data files found where Spark put them ({@link ShuffleDirectories}), the
 * block's range read from the index ({@link MapOutputIndex}), the index checked unchanged after
 * it was read, and the window cut from the block. What it holds open is its data file, until
 * closed; the carrier checks that file unchanged after its bytes ({@link #checkUnchanged}), so
 * that a map output written meanwhile is never answered as good bytes. Every refusal names the
 * block by its ids, so that a reducer can fail the right fetch.
 */
final class BlockWindow implements AutoCloseable {
  /** Index bytes read at a time while an index is checked (8-byte offsets). */
  static final int INDEX_SLICE = 64 * 1024;

  private final ServerContext server;
  private final ShuffleBlockId block;
  private final ShuffleData header;
  private final Placed dataFile;
  /** Null for a map output with no data file (no rows): its blocks are empty. */
  private final OpenMapOutputs.Lease data;
  private final OpenFiles.OpenFile dataOpen;
  /** Where the window starts in the data file. */
  private final long start;

  private BlockWindow(ServerContext server, ShuffleBlockId block, ShuffleData header, Placed dataFile,
      OpenMapOutputs.Lease data, OpenFiles.OpenFile dataOpen, long start) {
    this.server = server;
    this.block = block;
    this.header = header;
    this.dataFile = dataFile;
    this.data = data;
    this.dataOpen = dataOpen;
    this.start = start;
  }

  /**
   * The window {@code r} asks for, its data file open; refused with a
   * {@link RequestRefusedException} naming the block. {@code scratch}: a buffer of the caller's
   * ({@link #INDEX_SLICE} bytes), used only during this call. {@code checked}: the client checks
   * what it receives (CRC32C was negotiated), so the answer carries Spark's checksums of the
   * window's partitions where the map output has them ({@link MapOutputChecksums}).
   */
  static BlockWindow open(ServerContext server, ShuffleRead r, ByteBuffer scratch, boolean checked) {
    ShuffleBlockId block = r.block();
    ShuffleDirectories dirs = server.shuffleDirectories();
    if (r.maxLength() > server.limits().maxReadLength()) {
      throw refused(server, block, ErrorCode.LIMIT_EXCEEDED, "a window of " + r.maxLength()
          + " bytes exceeds the server's limit of " + server.limits().maxReadLength()
          + " bytes per request", null);
    }
    Placed indexFile = dirs.index(block);
    Placed dataFile = dirs.data(block);
    OpenMapOutputs.Lease dataLease = null;
    try (OpenMapOutputs.Lease indexLease = open(server, block, indexFile, false)) {
      FoundFile index = indexLease.file();
      dataLease = open(server, block, dataFile, true);
      FoundFile data = dataLease == null ? null : dataLease.file();
      OpenFiles.OpenFile dataOpen = data == null ? null : opened(dataFile, data);
      FileVersion dataVersion = dataOpen == null ? FileVersion.ANY : FileVersions.of(data.attributes());
      if (dataOpen != null && dataOpen.fileKey() == null && data.attributes().fileKey() != null) {
        throw refused(server, block, ErrorCode.FILE_CHANGED, "its data file " + dataFile.show()
            + " was renamed over while it was opened", null);
      }
      if (r.version().isChecked() && !r.version().equals(dataVersion)) {
        throw refused(server, block, ErrorCode.FILE_CHANGED, "its data file " + dataFile.show()
            + " changed since the block's first window: expected " + r.version().describe()
            + ", found " + (dataOpen == null ? "no file" : dataVersion.describe()), null);
      }
      MapOutputIndex.Range range;
      try {
        range = MapOutputIndex.range(block, indexFile.show(), index.channel(),
            FileVersions.of(index.attributes()), index.size(), dataVersion,
            dataOpen == null ? -1 : dataOpen.size(), dirs.checked(), scratch);
      } catch (RequestRefusedException e) {
        throw refused(server, block, e.code(), e.getMessage(), e);
      }
      // An index rewritten while it was read may have given offsets of two versions.
      try {
        FileRanges.checkUnchanged(server, indexFile.directory(), indexFile.path().requested(),
            FileVersion.ANY, opened(indexFile, index), null);
      } catch (RequestRefusedException e) {
        throw refused(server, block, e.code(), "its index " + indexFile.show() + ": " + e.getMessage(), e);
      }
      if (r.offset() > range.length()) {
        throw refused(server, block, ErrorCode.OUT_OF_RANGE, "a window from byte " + r.offset()
            + " is past the block's end (" + range.length() + " bytes)", null);
      }
      int length = (int) Math.min(r.maxLength(), range.length() - r.offset());
      PartitionChecksums checks = checked && dirs.checksumAlgorithm() != null && length > 0
          ? partitionChecksums(dirs, block, range, indexFile.show(), index, r.offset(), length, scratch)
          : PartitionChecksums.NONE;
      ShuffleData header = new ShuffleData(r.requestId(), range.length(), dataVersion, r.offset(), length,
          checks);
      BlockWindow w = new BlockWindow(server, block, header, dataFile, dataLease, dataOpen,
          range.start() + r.offset());
      dataLease = null;
      return w;
    } finally {
      if (dataLease != null) {
        dataLease.close();
      }
    }
  }

  /**
   * Spark's checksums of the window's partitions, or NONE. The partitions' offsets come from the
   * index already checked for the block's range (and checked unchanged after this, with it); a
   * block of one partition needs no more of them than its range.
   */
  private static PartitionChecksums partitionChecksums(ShuffleDirectories dirs, ShuffleBlockId block,
      MapOutputIndex.Range range, String where, FoundFile index, long offset, int length, ByteBuffer scratch) {
    if (block.partitions() > PartitionChecksums.MAX_PARTITIONS) {
      return PartitionChecksums.NONE;
    }
    long[] offsets = block.partitions() == 1 ? new long[] {range.start(), range.end()}
        : MapOutputIndex.offsets(block, where, index.channel(), scratch);
    for (int i = 1; i < offsets.length; i++) {
      if (offsets[i] < offsets[i - 1]) {
        return PartitionChecksums.NONE;  // the index changed under us: its check after this refuses it
      }
    }
    if (offsets[0] != range.start() || offsets[offsets.length - 1] != range.end()) {
      return PartitionChecksums.NONE;
    }
    return dirs.mapOutputChecksums().of(dirs, block, offsets, index.size() / 8 - 1, offset, length);
  }

  /** The answer's header: the block's length, the data file's version, the window. */
  ShuffleData header() {
    return header;
  }

  /** The window's bytes, as a READ's range is sent over TCP. */
  ReadAnswers.Range range() {
    return new ReadAnswers.Range(dataFile.directory(), dataFile.path().requested(), header.version(),
        dataOpen, start, header.length(), null);
  }

  /** Fills {@code dst} with the window's bytes from {@code position} within the window. */
  void readFully(long position, ByteBuffer dst) throws IOException {
    long at = start + position;
    while (dst.hasRemaining()) {
      int n = data.file().channel().read(dst, at);
      if (n < 0) {
        throw new EOFException("the data file " + dataFile.show() + " of shuffle block "
            + block.name() + " shrank while being read");
      }
      at += n;
    }
  }

  /**
   * After the window's last byte was read: refused ({@code FILE_CHANGED}, naming the block) when
   * its data file changed since it was opened, so that the bytes may mix two versions.
   */
  void checkUnchanged() {
    if (dataOpen == null) {
      return;
    }
    try {
      FileRanges.checkUnchanged(server, dataFile.directory(), dataFile.path().requested(),
          header.version(), dataOpen, null);
    } catch (RequestRefusedException e) {
      throw sending(e);
    }
  }

  /** A refusal while the window's bytes were read or sent ({@code e}), naming the block. */
  RequestRefusedException sending(RequestRefusedException e) {
    return refused(server, block, e.code(), "its data file " + dataFile.show() + ": " + e.getMessage(), e);
  }

  @Override
  public void close() {
    if (data != null) {
      data.close();
    }
  }

  /**
   * The map output's file {@code file} opened; null for a data file that is not there, which
   * Spark writes for a map output with no records (its index then says so).
   */
  private static OpenMapOutputs.Lease open(ServerContext server, ShuffleBlockId block, Placed file,
      boolean absentOk) {
    try {
      return server.shuffleDirectories().open(file);
    } catch (RequestRefusedException e) {
      if (e.code() == ErrorCode.NOT_FOUND && absentOk) {
        return null;
      }
      if (e.code() == ErrorCode.NOT_FOUND) {
        throw refused(server, block, ErrorCode.NOT_FOUND, "this executor has no output of that map"
            + " task (no index file " + file.show() + "): it was never written here, or was removed", e);
      }
      throw refused(server, block, e.code(), "its file " + file.show() + " cannot be served: "
          + e.getMessage(), e);
    }
  }

  private static OpenFiles.OpenFile opened(Placed file, FoundFile found) {
    return new OpenFiles.OpenFile(found.channel(), found.size(), found.fileKey(), found.attributes(),
        file.path().normalized());
  }

  private static RequestRefusedException refused(ServerContext server, ShuffleBlockId block,
      ErrorCode code, String why, Throwable cause) {
    return new RequestRefusedException(code, "Cannot serve shuffle block " + block.name() + " ("
        + block.describe() + ") on gpudirect server " + server.address() + ": " + why, cause);
  }
}

package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.server.RootDirectory.FoundFile;
import io.gpudirect.server.ShuffleDirectories.Placed;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The answers to one connection's SHUFFLE_READs: the map output's index and data files found
 * where Spark put them ({@link ShuffleDirectories}), the block's range read from the index
 * ({@link MapOutputIndex}), and the window asked for sent as a READ's bytes are
 * ({@link ReadAnswers#send}), with the same check after them: a data file that changed while
 * it was sent voids the payload, and an index that changed while it was read is refused before.
 * Every refusal names the block by its ids, so that a reducer can fail the right fetch.
 *
 * <p>Both files are opened for each request and closed after it, as Spark's own server opens
 * the data file for each block it sends: not kept open between requests as a READ's file is.
 */
final class ShuffleAnswers {
  /** Index bytes read at a time while an index is checked (8-byte offsets). */
  private static final int INDEX_SLICE = 64 * 1024;

  /** The server as its connections see it. */
  private final ServerContext server;
  private final ReadAnswers reads;
  private ByteBuffer indexSlice;

  ShuffleAnswers(ServerContext server, ReadAnswers reads) {
    this.server = server;
    this.reads = reads;
  }

  void answer(ShuffleRead r) throws IOException {
    server.counters().readStarted();
    try {
      answerCounted(r);
    } finally {
      server.counters().readEnded();
    }
  }

  private void answerCounted(ShuffleRead r) throws IOException {
    ShuffleBlockId block = r.block();
    ShuffleDirectories dirs = server.shuffleDirectories();
    if (r.maxLength() > server.limits().maxReadLength()) {
      throw refused(block, ErrorCode.LIMIT_EXCEEDED, "a window of " + r.maxLength()
          + " bytes exceeds the server's limit of " + server.limits().maxReadLength()
          + " bytes per request");
    }
    Placed indexFile = dirs.index(block);
    Placed dataFile = dirs.data(block);
    try (FoundFile index = open(block, indexFile, false); FoundFile data = open(block, dataFile, true)) {
      OpenFiles.OpenFile dataOpen = data == null ? null : opened(dataFile, data);
      FileVersion dataVersion = dataOpen == null ? FileVersion.ANY : FileVersions.of(data.attributes());
      if (dataOpen != null && dataOpen.fileKey() == null && data.attributes().fileKey() != null) {
        throw refused(block, ErrorCode.FILE_CHANGED, "its data file " + dataFile.show()
            + " was renamed over while it was opened");
      }
      if (r.version().isChecked() && !r.version().equals(dataVersion)) {
        throw refused(block, ErrorCode.FILE_CHANGED, "its data file " + dataFile.show()
            + " changed since the block's first window: expected " + r.version().describe()
            + ", found " + (dataOpen == null ? "no file" : dataVersion.describe()));
      }
      MapOutputIndex.Range range;
      try {
        range = MapOutputIndex.range(block, indexFile.show(), index.channel(),
            FileVersions.of(index.attributes()), index.size(), dataVersion,
            dataOpen == null ? -1 : dataOpen.size(), dirs.checked(), indexSlice());
      } catch (RequestRefusedException e) {
        throw refused(block, e.code(), e.getMessage(), e);
      }
      // An index rewritten while it was read may have given offsets of two versions.
      unchanged(block, indexFile, opened(indexFile, index));
      if (r.offset() > range.length()) {
        throw refused(block, ErrorCode.OUT_OF_RANGE, "a window from byte " + r.offset()
            + " is past the block's end (" + range.length() + " bytes)");
      }
      int length = (int) Math.min(r.maxLength(), range.length() - r.offset());
      ShuffleData header = new ShuffleData(r.requestId(), range.length(), dataVersion, r.offset(), length);
      try {
        reads.send(header, new ReadAnswers.Range(dataFile.directory(),
            dataFile.path().requested(), dataVersion, dataOpen, range.start() + r.offset(), length, null));
      } catch (RequestRefusedException e) {
        throw refused(block, e.code(), "its data file " + dataFile.show() + ": " + e.getMessage(), e);
      }
      server.counters().countBytesSent(length);
    }
  }

  /**
   * The map output's file {@code file} opened; null for a data file that is not there, which
   * Spark writes for a map output with no records (its index then says so).
   */
  private FoundFile open(ShuffleBlockId block, Placed file, boolean absentOk) {
    try {
      return file.directory().openFile(file.path(), null, null);
    } catch (RequestRefusedException e) {
      if (e.code() == ErrorCode.NOT_FOUND && absentOk) {
        return null;
      }
      if (e.code() == ErrorCode.NOT_FOUND) {
        throw refused(block, ErrorCode.NOT_FOUND, "this executor has no output of that map task"
            + " (no index file " + file.show() + "): it was never written here, or was removed", e);
      }
      throw refused(block, e.code(), "its file " + file.show() + " cannot be served: "
          + e.getMessage(), e);
    }
  }

  private static OpenFiles.OpenFile opened(Placed file, FoundFile found) {
    return new OpenFiles.OpenFile(found.channel(), found.size(), found.fileKey(), found.attributes(),
        file.path().normalized());
  }

  private void unchanged(ShuffleBlockId block, Placed file, OpenFiles.OpenFile open) {
    try {
      FileRanges.checkUnchanged(server, file.directory(), file.path().requested(), FileVersion.ANY,
          open, null);
    } catch (RequestRefusedException e) {
      throw refused(block, e.code(), "its index " + file.show() + ": " + e.getMessage(), e);
    }
  }

  private ByteBuffer indexSlice() {
    if (indexSlice == null) {
      indexSlice = ByteBuffer.allocate(INDEX_SLICE);
    }
    return indexSlice;
  }

  private RequestRefusedException refused(ShuffleBlockId block, ErrorCode code, String why) {
    return refused(block, code, why, null);
  }

  private RequestRefusedException refused(ShuffleBlockId block, ErrorCode code, String why,
      Throwable cause) {
    return new RequestRefusedException(code, "Cannot serve shuffle block " + block.name() + " ("
        + block.describe() + ") on gpudirect server " + server.address() + ": " + why, cause);
  }
}

package io.gpudirect.server.rdma;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What the RDMA side of a server reads from: the server's checks of paths, lengths and ranges,
 * and its counters, without {@code server.rdma} knowing the server's classes. One instance
 * per authenticated TCP connection.
 */
public interface ServedFiles {
  /**
   * Checks and opens {@code [offset, offset + length)} of {@code path}, which must still be
   * {@code version} ({@link FileVersion#ANY}: any); throws {@link ReadRefusedException} with
   * the code and a message naming the path when refused.
   */
  FileRange open(String path, FileVersion version, long offset, int length);

  /**
   * Checks and opens the window of a shuffle block {@code read} asks for, exactly as a
   * SHUFFLE_READ over TCP is checked; throws {@link ReadRefusedException} with the code and a
   * message naming the block when refused. {@code checked}: the client checks what it receives,
   * so the window's header carries Spark's partition checksums where the map output has them.
   */
  BlockRange openBlock(ShuffleRead read, boolean checked);

  /** A failure of the RDMA side of this connection, for the server's counters and log. */
  void failed(String why);

  /** An open range; closing it ends the read for the server's counters. */
  interface FileRange extends AutoCloseable {
    /** Fills {@code dst} from {@code position} (relative to the range's file offset). */
    void readFully(long position, ByteBuffer dst) throws IOException;

    /**
     * After the last byte was read: throws {@link ReadRefusedException} ({@code FILE_CHANGED})
     * when the file changed since {@link #open} checked it, so the bytes may mix two versions.
     */
    void checkUnchanged();

    /** {@code n} more bytes went out to the client. */
    void sent(long n);

    @Override
    void close();
  }

  /** A window of a shuffle block, open: its bytes and what its answer says of them. */
  interface BlockRange extends FileRange {
    /** The block's length, its data file's version and the window, as SHUFFLE_DATA gives them. */
    ShuffleData header();
  }
}

package io.gpudirect.client;

import io.gpudirect.protocol.Crc32cCombine;
import io.gpudirect.transport.ChecksumMismatchException;
import java.nio.ByteBuffer;
import java.util.OptionalInt;
import java.util.zip.CRC32C;

/** The CRC32C of a whole read from its chunks' CRC32Cs, for a caller that checks it where the bytes go next. */
final class ChunkChecksums {
  private ChunkChecksums() {}

  /**
   * The CRC32C of {@code bytes} from its chunks' (each {@code chunk} long but the last). Should
   * some chunk have come without one (a server restarted without checksums between a chunk and
   * its retry), the others are checked here and none is handed on.
   */
  static OptionalInt combined(String serverName, String path, long offset, ByteBuffer bytes,
      int chunk, OptionalInt[] crcs) {
    boolean all = true;
    for (OptionalInt c : crcs) {
      all &= c.isPresent();
    }
    int crc = 0;
    for (int i = 0; i < crcs.length; i++) {
      int from = i * chunk;
      int len = Math.min(chunk, bytes.remaining() - from);
      if (all) {
        crc = i == 0 ? crcs[i].getAsInt() : Crc32cCombine.combine(crc, crcs[i].getAsInt(), len);
      } else if (crcs[i].isPresent()) {
        CRC32C actual = new CRC32C();
        actual.update(bytes.slice(from, len));
        if ((int) actual.getValue() != crcs[i].getAsInt()) {
          throw new ChecksumMismatchException(path, offset + from, len,
              "from gpudirect server " + serverName, crcs[i].getAsInt(), (int) actual.getValue());
        }
      }
    }
    return all ? OptionalInt.of(crc) : OptionalInt.empty();
  }
}

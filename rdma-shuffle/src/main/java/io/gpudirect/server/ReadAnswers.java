package io.gpudirect.server;

import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.PartitionChecksums;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.tls.TlsChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * The answers to one connection's READs, after the handshake: a small one read into memory
 * and sent in one write, a large one by sendfile (or through TLS) with its CRC32C computed
 * beside it. Either way a file that changed while it was read is refused, never sent as good.
 * A SHUFFLE_READ's answer goes out the same way ({@link #send}), after its own header.
 */
final class ReadAnswers {
  /** READ answers of at most this many payload bytes go out in one write (see sendSmall). */
  static final int SMALL_READ_BYTES = 64 * 1024;
  /**
   * Room for an answer's frame before its payload: READ_DATA's (25 bytes) or SHUFFLE_DATA's,
   * whose version holds a file id of up to 256 bytes, and its partition checksums.
   */
  private static final int HEADER_ROOM = 512 + PartitionChecksums.MAX_ENCODED_BYTES;

  /** The server as its connections see it. */
  private final ServerContext server;
  private final SocketChannel channel;
  /** Where answers go: the socket, or TLS over it. */
  private final ByteChannel wire;
  /** Non-null with TLS; payloads then go through it instead of sendfile. */
  private final TlsChannel tls;
  private final boolean crc;
  private final String peer;
  private final OpenFiles openFiles;
  /** Header, payload and trailer of a small READ answer; made at the first one, charged to the server. */
  private HostBuffer smallAnswerMemory;
  private ByteBuffer smallAnswer;
  /** Header and trailer of a large READ answer, around its sendfile. */
  private final ByteBuffer largeHeader = ByteBuffer.allocate(HEADER_ROOM);
  private final ByteBuffer largeTrailer = ByteBuffer.allocate(ReadData.TRAILER_BYTES);
  private final CRC32C checksum = new CRC32C();

  /** {@code openFiles}: the connection's, which keeps files open between its reads. */
  ReadAnswers(ServerContext server, SocketChannel channel, ByteChannel wire, TlsChannel tls,
      boolean crc, String peer, OpenFiles openFiles) {
    this.server = server;
    this.channel = channel;
    this.wire = wire;
    this.tls = tls;
    this.crc = crc;
    this.peer = peer;
    this.openFiles = openFiles;
  }

  /** Answers one READ: the range checked, then sent small or large; counted while in flight. */
  void answer(ReadRequest r) throws IOException {
    server.counters().readStarted();
    try {
      readCounted(r);
    } finally {
      server.counters().readEnded();
    }
  }

  private void readCounted(ReadRequest r) throws IOException {
    FileRanges.checkLength(server, r.path(), r.length());
    if (r.length() <= SMALL_READ_BYTES && r.version().isChecked() && answeredFromKeptFile(r)) {
      server.counters().countBytesSent(r.length());
      return;
    }
    OpenFiles.OpenFile open;
    try {
      open = openFiles.acquire(server.root(), r.path());
    } catch (RequestRefusedException e) {
      throw FileRanges.notOpened(server, r.path(), r.version(), e);
    }
    try {
      FileRanges.checkVersion(server, r.path(), r.version(), open);
      FileRanges.checkRange(r.path(), r.offset(), r.length(), open.size());
      send(new ReadData(r.requestId(), r.offset(), r.length()), new Range(server.root(), r.path(),
          r.version(), open, r.offset(), r.length(), openFiles));
      server.counters().countBytesSent(r.length());
    } finally {
      openFiles.release();
    }
  }

  /**
   * Bytes {@code [offset, offset + length)} of {@code file}, an open file of {@code root} that
   * the request's path (or block) led to, checked to be {@code expected} when that names a
   * version; {@code path} is the file's path below {@code root}, for the check after the bytes
   * and for messages; {@code kept}, the directories the connection keeps open, or null.
   */
  record Range(RootDirectory root, String path, FileVersion expected, OpenFiles.OpenFile file,
      long offset, int length, RootDirectory.KeptDirectories kept) {}

  /**
   * Sends {@code header} (READ_DATA or SHUFFLE_DATA, announcing {@code range.length()} payload
   * bytes), the range's bytes and the trailer: small or large, and refused, never sent as good,
   * when the file changed while it was read. A range of no bytes needs no file. The trailer
   * carries the payload's CRC32C where negotiated, unless the header carries Spark's checksums
   * of the partitions the payload holds, which the client checks instead.
   */
  void send(Message header, Range range) throws IOException {
    boolean withCrc = crc && !(header instanceof ShuffleData d && d.checks().present());
    if (range.length() <= SMALL_READ_BYTES) {
      sendSmall(header, range, withCrc);
    } else {
      sendLarge(header, range, version(range.file()), withCrc);
    }
  }

  /**
   * A small answer is read into memory ({@code pread}), checksummed there while in cache, and
   * sent as one write: header, payload and trailer. Three writes (header, sendfile, trailer)
   * cost three system calls here and up to three wake-ups of the client's reader, which for
   * 4 KiB was most of the time (docs/benchmarks.md). As nothing is sent before the bytes are
   * in, a file that shrank, changed while it was read or cannot be read is refused like any
   * bad read, and the connection carries on.
   */
  private void sendSmall(Message header, Range r, boolean withCrc) throws IOException {
    ByteBuffer b = smallAnswer();
    int payloadEnd = HEADER_ROOM + r.length();
    b.clear().position(HEADER_ROOM).limit(payloadEnd);
    if (r.length() > 0) {
      FileChannel fc = r.file().channel();
      try {
        while (b.hasRemaining()) {
          long at = r.offset() + (b.position() - HEADER_ROOM);
          if (fc.read(b, at) < 0) {
            throw new RequestRefusedException(ErrorCode.OUT_OF_RANGE, "Read of "
                + RootDirectory.show(r.path()) + " at offset " + r.offset() + " length "
                + r.length() + " runs past the end of the file: it ended at offset " + at
                + " while being read");
          }
        }
      } catch (IOException e) {
        throw new RequestRefusedException(ErrorCode.IO_ERROR,
            "Cannot read " + RootDirectory.show(r.path()) + ": " + e, e);
      }
    }
    if (r.file() != null) {
      FileRanges.checkUnchanged(server, r.root(), r.path(), r.expected(), r.file(), r.kept());
    }
    finishSmall(b, header, payloadEnd, withCrc);
  }

  /**
   * A small READ of a named version from the file the connection keeps open for its path, read
   * first and checked after, with one walk instead of two looks (a walk before, an fstat after):
   * half the system calls beyond the read itself, at 4 KiB most of what separates a READ from a
   * bare ping-pong (docs/benchmarks.md). The bytes go out only if the walk after the read
   * ({@code fstatat} of the name, relative to the directory the walk opened, as every READ's)
   * finds the very file read (same device and inode) at the version named and holding the
   * range. That one look does the work of both: the name still holds the file (a rename over
   * or a delete is seen), and the file is the version named after the bytes were read, so no
   * write landed since the reader's STAT, during the read included (a write updates the
   * modification and change times before it copies its data). Nothing is sent before it, and
   * the channel was opened by such a walk, so a path swapped meanwhile can make this fall back,
   * never lead outside the root. False, with nothing sent, whenever anything differs or fails:
   * the READ then takes the usual way, which refuses or answers it.
   */
  private boolean answeredFromKeptFile(ReadRequest r) throws IOException {
    LastPath path = lastPath(r.path());
    if (path == null) {
      return false;
    }
    OpenFiles.Entry kept = openFiles.peek(path.normalized);
    if (kept == null) {
      return false;
    }
    try {
      ByteBuffer b = smallAnswer();
      int payloadEnd = HEADER_ROOM + r.length();
      b.clear().position(HEADER_ROOM).limit(payloadEnd);
      try {
        while (b.hasRemaining()) {
          if (kept.channel().read(b, r.offset() + (b.position() - HEADER_ROOM)) < 0) {
            return false;
          }
        }
      } catch (IOException e) {
        return false;
      }
      BasicFileAttributes now;
      try {
        now = server.root().attributesNow(path.requested, path.last, openFiles);
      } catch (RequestRefusedException e) {
        return false;
      }
      if (!kept.fileKey().equals(now.fileKey())
          || !FileVersions.isVersion(r.version(), kept.fileId(), now)
          || r.offset() + r.length() > now.size()) {
        return false;
      }
      finishSmall(b, new ReadData(r.requestId(), r.offset(), r.length()), payloadEnd, crc);
      return true;
    } finally {
      openFiles.release();
    }
  }

  /**
   * A path taken apart once for a run of READs that name it alike, as a reader 4 KiB at a time
   * does: the request's string is compared, not parsed, normalised and made into a name again.
   */
  private record LastPath(String text, RequestedPath requested, String normalized, Path last) {}

  private LastPath lastPath;

  /** The path {@code text} names, taken apart; null when it names nothing to read. */
  private LastPath lastPath(String text) {
    LastPath p = lastPath;
    if (p != null && p.text.equals(text)) {
      return p;
    }
    RequestedPath requested;
    try {
      requested = RequestedPath.of(text);
    } catch (RequestRefusedException e) {
      return null;
    }
    if (requested.isRoot()) {
      return null;
    }
    p = new LastPath(text, requested, requested.normalized(), requested.last());
    lastPath = p;
    return p;
  }

  /**
   * Status, CRC32C and header around the payload read into {@code b} at {@link #HEADER_ROOM};
   * then one write, from where the header starts.
   */
  private void finishSmall(ByteBuffer b, Message header, int payloadEnd, boolean withCrc)
      throws IOException {
    int end = payloadEnd;
    b.limit(b.capacity()).put(end, ReadData.PAYLOAD_GOOD);
    end += ReadData.STATUS_BYTES;
    if (withCrc) {
      checksum.reset();
      checksum.update(b.position(HEADER_ROOM).limit(payloadEnd));
      b.limit(b.capacity()).putInt(end, (int) checksum.getValue());
      end += ReadData.CRC_BYTES;
    }
    int headerLength = Frames.frameLength(header);
    int start = HEADER_ROOM - headerLength;
    Frames.encode(header, b.clear().slice(start, headerLength), headerLength);
    writeFully(b.position(start).limit(end));
  }

  /**
   * One per connection, for its lifetime: 64 KiB of direct memory, given back by {@link #close}.
   * A large answer reads the partial blocks at its ends through it too (sendLarge).
   */
  private ByteBuffer smallAnswer() {
    if (smallAnswer == null) {
      smallAnswerMemory = server.memory().allocate(HEADER_ROOM + SMALL_READ_BYTES
          + ReadData.TRAILER_BYTES, "small-answer buffer of client " + peer);
      smallAnswer = smallAnswerMemory.nioBuffer();
    }
    return smallAnswer;
  }

  /** The connection ended: its buffer goes back. */
  void close() {
    if (smallAnswerMemory != null) {
      smallAnswerMemory.close();
      smallAnswerMemory = null;
    }
  }

  /** The file behind the request's channel, for its cached block checksums; null when unsure. */
  private static BlockChecksums.Version version(OpenFiles.OpenFile open) {
    if (open.fileKey() == null) {
      return null;
    }
    BasicFileAttributes a = open.attributes();
    return new BlockChecksums.Version(open.fileKey(), a.size(),
        a.lastModifiedTime().to(TimeUnit.NANOSECONDS), FileVersions.changedNanos(a));
  }

  /**
   * A large answer: header, sendfile, trailer. The file is checked again after the payload
   * went out ({@link FileRanges#checkUnchanged}); when it changed, the trailer voids the
   * payload and the refusal follows it. The CRC32C cannot stand in for that check: it is
   * computed from a second read of the file (or from block checksums cached before), not from
   * the bytes sendfile sent, so a write during the transfer can make it match mixed bytes (both
   * reads saw the same mix) as well as fail good ones. It guards the wire, not the version.
   *
   * <p>What is left: sendfile returns once its pages are queued on the socket, not sent, and
   * TCP sends those page-cache pages themselves; a write after the check into pages still
   * queued (at most a send and a receive buffer's worth) reaches the wire unseen here. The
   * CRC32C then usually differs (it was read before, or comes from the block cache of the old
   * contents), the client retries, and the retry is refused with FILE_CHANGED; without
   * checksums it would pass. TLS copies the bytes before sending, so it has no such window.
   */
  private void sendLarge(Message header, Range r, BlockChecksums.Version version, boolean withCrc)
      throws IOException {
    OpenFiles.OpenFile open = r.file();
    FileChannel fc = open.channel();
    Path file = r.root().path().resolve(open.path());
    long end = r.offset() + r.length();
    writeFully(Frames.encode(header, largeHeader, Frames.frameLength(header)));
    // The checksum trails the payload. For a range whose whole blocks are all cached it is
    // worked out here; otherwise on another core while sendfile runs.
    Integer cached = withCrc ? server.blockChecksums().crcIfCached(fc, version, r.offset(), r.length(),
        smallAnswer(), checksum) : null;
    Future<Integer> computing = withCrc && cached == null
        ? server.checksums().of(server.blockChecksums(), fc, version, r.offset(), r.length()) : null;
    long pos = r.offset();
    while (pos < end) {
      long n = tls != null ? tls.transferFrom(fc, pos, end - pos)
          : fc.transferTo(pos, end - pos, channel);
      if (n <= 0 && fc.size() < end) {
        // The header promised bytes the file no longer has: the stream cannot be resynced.
        throw new IOException("File " + file + " shrank while being sent to " + peer);
      }
      pos += n;
    }
    RequestRefusedException changed = null;
    try {
      FileRanges.checkUnchanged(server, r.root(), r.path(), r.expected(), open, r.kept());
    } catch (RequestRefusedException e) {
      changed = e;
    }
    largeTrailer.clear().put(changed == null ? ReadData.PAYLOAD_GOOD : ReadData.PAYLOAD_VOID);
    if (cached != null) {
      largeTrailer.putInt(cached);
    } else if (computing != null) {
      largeTrailer.putInt(changed == null ? Checksums.await(computing, file)
          : Checksums.awaitQuietly(computing));
    }
    writeFully(largeTrailer.flip());
    if (changed != null) {
      throw changed;
    }
  }

  private void writeFully(ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      wire.write(buf);
    }
  }
}

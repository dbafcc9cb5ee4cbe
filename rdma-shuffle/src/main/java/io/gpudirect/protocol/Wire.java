package io.gpudirect.protocol;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Field codecs. Every length is checked against its bound and the bytes left before use. */
final class Wire {
  private Wire() {}

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static int stringLength(String s) {
    return 4 + utf8(s).length;
  }

  static void putString(ByteBuffer buf, String s) {
    byte[] b = utf8(s);
    buf.putInt(b.length);
    buf.put(b);
  }

  static String getString(ByteBuffer buf, int maxBytes, String field) {
    int len = buf.getInt();
    if (len < 0 || len > maxBytes) {
      throw new ProtocolException(field + " length " + len + " is outside 0.." + maxBytes);
    }
    if (len > buf.remaining()) {
      throw new ProtocolException(field + " length " + len + " runs past the end of the frame ("
          + buf.remaining() + " bytes left)");
    }
    byte[] bytes = new byte[len];
    buf.get(bytes);
    // Paths and file ids are nearly always ASCII, which is its own UTF-8: made into a String as
    // it is (a copy), without a strict decoder's set-up and byte-by-byte loop over a direct
    // buffer, which were the larger part of decoding a 4 KiB READ (docs/benchmarks.md).
    if (isAscii(bytes)) {
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
    try {
      CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes));
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw new ProtocolException(field + " is not valid UTF-8", e);
    }
  }

  private static boolean isAscii(byte[] bytes) {
    for (byte b : bytes) {
      if (b < 0) {
        return false;
      }
    }
    return true;
  }

  static byte[] getBytes(ByteBuffer buf, int n, String field) {
    if (n > buf.remaining()) {
      throw new ProtocolException(field + " needs " + n + " bytes, frame has " + buf.remaining());
    }
    byte[] b = new byte[n];
    buf.get(b);
    return b;
  }

  static void putBytes(ByteBuffer buf, byte[] b, int n, String field) {
    if (b.length != n) {
      throw new IllegalArgumentException(field + " must be " + n + " bytes, got " + b.length);
    }
    buf.put(b);
  }

  static boolean getBoolean(ByteBuffer buf, String field) {
    byte b = buf.get();
    if (b != 0 && b != 1) {
      throw new ProtocolException(field + " must be 0 or 1, got " + b);
    }
    return b == 1;
  }

  static long nonNegative(long v, String field) {
    if (v < 0) {
      throw new ProtocolException(field + " must not be negative: " + v);
    }
    return v;
  }
}

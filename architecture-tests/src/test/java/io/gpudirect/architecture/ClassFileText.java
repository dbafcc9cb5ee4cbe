package io.gpudirect.architecture;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The text constants of a class file (its constant pool's UTF-8 entries): string literals,
 * annotation values, member names and descriptors. ArchUnit sees a class only through its
 * references, so a class named in a string ({@code Class.forName("io.gpudirect...")}) is found
 * here. The format is JVMS 4.4; nothing past the constant pool is read.
 */
final class ClassFileText {
  private ClassFileText() {}

  static List<String> of(byte[] classFile) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile))) {
      if (in.readInt() != 0xCAFEBABE) {
        throw new IllegalArgumentException("not a class file");
      }
      in.skipBytes(4); // minor and major version
      int count = in.readUnsignedShort();
      List<String> texts = new ArrayList<>();
      for (int i = 1; i < count; i++) {
        int tag = in.readUnsignedByte();
        switch (tag) {
          case 1 -> texts.add(in.readUTF()); // Utf8: a u2 length and modified UTF-8, as readUTF reads it
          case 7, 8, 16, 19, 20 -> in.skipBytes(2); // Class, String, MethodType, Module, Package
          case 15 -> in.skipBytes(3); // MethodHandle
          case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4); // Integer, Float, refs, NameAndType, (Invoke)Dynamic
          case 5, 6 -> { // Long and Double take two entries
            in.skipBytes(8);
            i++;
          }
          default -> throw new IllegalArgumentException("unknown constant pool tag " + tag + " at entry " + i);
        }
      }
      return texts;
    } catch (IOException e) {
      throw new IllegalArgumentException("truncated class file", e);
    }
  }
}

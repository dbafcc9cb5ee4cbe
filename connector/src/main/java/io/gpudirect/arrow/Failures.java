package io.gpudirect.arrow;

import org.apache.arrow.memory.OutOfMemoryException;

/**
 * Turns whatever Arrow Java throws on bad input (IOException, IndexOutOfBounds,
 * IllegalArgument, its allocator's OutOfMemoryException, a StackOverflowError from a
 * self-referencing flatbuffer) into one {@link ArrowFormatException} naming the file.
 */
public final class Failures {
  private Failures() {}

  public static ArrowFormatException named(String displayName, String doing, Throwable cause) {
    if (cause instanceof ArrowFormatException) {
      return (ArrowFormatException) cause;
    }
    if (cause instanceof OutOfMemoryException) {
      return new ArrowFormatException(displayName, doing + ": it needs more memory than its size justifies, "
          + "so a length in it is wrong (" + cause.getMessage() + ")", cause);
    }
    if (cause instanceof StackOverflowError) {
      return new ArrowFormatException(displayName, doing + ": its metadata nests without end", cause);
    }
    return new ArrowFormatException(displayName, doing + ": " + cause, cause);
  }
}

package io.gpudirect.protocol;

/**
 * A frame whose CRC32C does not match its bytes: they changed on the way (a faulty link, NIC or
 * memory), and none of its fields can be trusted, nor where the next frame starts.
 */
public class CorruptFrameException extends ProtocolException {
  public CorruptFrameException(String message) {
    super(message);
  }
}

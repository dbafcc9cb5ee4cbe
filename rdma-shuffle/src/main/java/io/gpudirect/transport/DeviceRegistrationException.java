package io.gpudirect.transport;

/**
 * Device memory cannot be registered for a server's writes on this host (no nvidia-peermem,
 * or a NIC that cannot reach the GPU). The client then reads into host memory and copies.
 */
public class DeviceRegistrationException extends TransportException {
  public DeviceRegistrationException(String message, Throwable cause) {
    super(message, cause);
  }
}

package io.gpudirect.options;

import io.gpudirect.client.ClientConfig;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The client settings of a read, parsed once: what an executor needs to reach the servers as
 * the driver did, and what tells two connection pools apart (a record compares by value, so
 * the scan's readers and the gpudirect:// file system, resolving the same settings from
 * different places, share one pool). It holds no secret: see {@link Secret}.
 *
 * @param rdmaProvider auto, ucx or disni, by name: the block client chooses and opens the provider
 * @param tlsTrustStore a PEM file, or empty for the JDK's CAs (a String: {@link Path} is not
 *     serializable)
 */
public record ClientSettings(String transport, String rdmaProvider, int streams, int maxBytesInFlight, int chunkSize,
    Duration connectTimeout, Duration requestTimeout, int maxRetries, Duration retryBackoff,
    boolean checksums, boolean tls, String tlsTrustStore, int listingMaxEntries, long listingMaxBytes,
    Duration listingTimeout) implements Serializable {

  /**
   * The block client's configuration with {@code secret}.
   *
   * @param secretSetting where this caller's user sets the secret, named in authentication errors
   */
  public ClientConfig config(Secret secret, String secretSetting) {
    return ClientConfig.builder()
        .secretSetting(secretSetting)
        .secret(secret.bytes())
        .streams(streams)
        .maxBytesInFlight(maxBytesInFlight)
        .chunkSize(chunkSize)
        .connectTimeout(connectTimeout)
        .requestTimeout(requestTimeout)
        .maxRetries(maxRetries)
        .retryBackoff(retryBackoff)
        .transport(transport)
        .rdmaProvider(rdmaProvider)
        .checksums(checksums)
        .tls(tls)
        .tlsTrustStore(tlsTrustStore.isEmpty() ? null : Path.of(tlsTrustStore))
        .maxListEntries(listingMaxEntries)
        .maxListBytes(listingMaxBytes)
        .listTimeout(listingTimeout)
        .build();
  }
}

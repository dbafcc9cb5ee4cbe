package io.gpudirect.spark;

import io.gpudirect.client.RemoteStore;
import io.gpudirect.hadoop.FileSystemConf;
import io.gpudirect.options.ClientSettings;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.remote.RemoteStores;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;

/**
 * What a scan's readers on executors need of its options, resolved and parsed on the driver:
 * the client settings and where batches are decoded. The options themselves stay on the
 * driver, and the secret is not here: it travels in the scan's broadcast Hadoop conf, where
 * the gpudirect:// file system of Spark's own readers needs it anyway (see {@link FileSystemConf}).
 */
record ReadSpec(ClientSettings client, Output output) implements Serializable {
  static ReadSpec of(ResolvedOptions options) {
    return new ReadSpec(options.client(), Output.of(options.output()));
  }

  /** The executor's store for {@code uri}: the pool the file system of the same conf uses too. */
  RemoteStore store(GpuDirectUri uri, Configuration scanConf) {
    return RemoteStores.get(uri, client, FileSystemConf.secret(scanConf));
  }
}

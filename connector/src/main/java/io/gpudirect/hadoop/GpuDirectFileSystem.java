package io.gpudirect.hadoop;

import io.gpudirect.client.FileEntry;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.GpuDirectUri;
import io.gpudirect.remote.RemoteStores;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.apache.spark.SparkEnv;

/**
 * The read-only Hadoop view of one gpudirect server, for {@code gpudirect://host:port/path}.
 * Spark's own Parquet reader reads through it, so every type Spark reads from Parquet reads
 * the same here; only the byte ranges the reader asks for cross the wire.
 *
 * <p>Client settings come from the Hadoop conf keys {@code spark.gpudirect.*}, else from the
 * Spark conf of this JVM, else from the defaults.
 */
public final class GpuDirectFileSystem extends FileSystem {
  /** Reported as the block size: what Hadoop-style planners split files by. */
  private static final long SPLIT_SIZE_HINT = 128L << 20;

  private URI uri;
  private RemoteStore store;
  private Path workingDir;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    GpuDirectUri server = GpuDirectUri.parse(name.toString());
    this.uri = URI.create(GpuDirectUri.SCHEME + "://" + server.authority());
    this.workingDir = new Path(uri.toString() + "/");
    ResolvedOptions options = ResolvedOptions.resolve(Map.of(), key -> {
      String v = conf.get(key);
      if (v == null && SparkEnv.get() != null) {
        v = SparkEnv.get().conf().get(key, null);
      }
      return v;
    });
    this.store = RemoteStores.get(server, options);
  }

  @Override
  public String getScheme() {
    return GpuDirectUri.SCHEME;
  }

  @Override
  public URI getUri() {
    return uri;
  }

  /** The store's connections are shared by the JVM; closing this view leaves them open. */
  @Override
  public void close() throws IOException {
    super.close();
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    String path = remotePath(f);
    FileEntry entry = stat(f, path);
    if (entry.directory()) {
      throw new FileNotFoundException("Cannot open " + qualify(f) + ": it is a directory");
    }
    return new FSDataInputStream(new RemoteInputStream(store, path, entry.length(), statistics));
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return toStatus(stat(f, remotePath(f)));
  }

  /**
   * The server lists recursively; the direct children of a directory are derived from that,
   * with sub-directories standing for the files below them.
   */
  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    String path = remotePath(f);
    FileEntry self = stat(f, path);
    if (!self.directory()) {
      return new FileStatus[] {toStatus(self)};
    }
    String prefix = path.isEmpty() ? "" : path + "/";
    Map<String, FileStatus> children = new LinkedHashMap<>();
    for (FileEntry e : store.list(path)) {
      String rest = e.path().startsWith(prefix) ? e.path().substring(prefix.length()) : e.path();
      int slash = rest.indexOf('/');
      if (slash < 0) {
        children.put(rest, toStatus(e));
      } else {
        String dir = rest.substring(0, slash);
        children.putIfAbsent(dir, new FileStatus(0, true, 1, 0, e.modifiedMillis(), qualify(prefix + dir)));
      }
    }
    return children.values().toArray(new FileStatus[0]);
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = makeQualified(dir);
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    throw readOnly("create", f);
  }

  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress) throws IOException {
    throw readOnly("append to", f);
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    throw readOnly("rename", src);
  }

  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    throw readOnly("delete", f);
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    throw readOnly("create directory", f);
  }

  private IOException readOnly(String what, Path f) {
    return new IOException("Cannot " + what + " " + qualify(f) + ": gpudirect:// is read-only");
  }

  private FileEntry stat(Path f, String path) throws FileNotFoundException {
    try {
      return store.stat(path);
    } catch (io.gpudirect.client.RemoteFileException e) {
      if (e.code() == io.gpudirect.protocol.ErrorCode.NOT_FOUND) {
        FileNotFoundException fnf = new FileNotFoundException("File not found: " + qualify(f));
        fnf.initCause(e);
        throw fnf;
      }
      throw e;
    }
  }

  private FileStatus toStatus(FileEntry e) {
    return new FileStatus(e.length(), e.directory(), 1, SPLIT_SIZE_HINT,
        e.modifiedMillis(), qualify(e.path()));
  }

  private Path qualify(String remotePath) {
    return new Path(uri.toString() + "/" + remotePath);
  }

  private Path qualify(Path f) {
    return makeQualified(f);
  }

  private String remotePath(Path f) {
    Path q = makeQualified(f);
    String p = q.toUri().getPath();
    return p.startsWith("/") ? p.substring(1) : p;
  }

  /** For tests and tools: the store this view reads through. */
  RemoteStore store() {
    return store;
  }
}

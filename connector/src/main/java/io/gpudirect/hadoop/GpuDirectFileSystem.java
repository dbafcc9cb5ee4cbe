package io.gpudirect.hadoop;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteFileException;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.options.SparkConfLookup;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.remote.RemoteStores;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.fs.permission.AclEntry;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The read-only Hadoop view of one gpudirect server, for {@code gpudirect://host:port/path}.
 * Registered through {@code META-INF/services}, so {@code spark.read.parquet}, {@code csv},
 * {@code json} and every other Hadoop-based reader find it without configuration; only the
 * byte ranges a reader asks for cross the wire.
 *
 * <p>Client settings come from the Hadoop conf keys {@code spark.gpudirect.*} (Spark copies
 * its session conf there, and a gpudirect scan the settings it resolved: {@link FileSystemConf}),
 * else, where the conf is not a session's, from the Spark conf of this JVM, else from the
 * defaults.
 *
 * <p>Hadoop would cache one instance per server and user, made with the conf of the first
 * caller, and hand it to every later caller: a secret corrected with {@code spark.conf.set}
 * would never reach it, and no other source can tell a cached instance the caller's settings
 * (a footer read on an executor's helper thread has no task and no session). So loading this
 * class turns that cache off for {@code gpudirect://}, as a Hadoop default
 * ({@code gpudirect-hadoop-default.xml}, the way HDFS adds {@code hdfs-default.xml}). That is
 * cheap here: an instance is a view that parses its URI; the connections live in
 * {@link RemoteStores}, one pool per server and settings, the secret among them as a digest.
 *
 * <p>The server lists regular files only, recursively: directories are derived from the
 * paths of the files below them, so an empty directory is not seen. Every call that would
 * change anything fails with an {@link IOException} that names the path.
 */
public final class GpuDirectFileSystem extends FileSystem {
  /** Reported as the block size: what Hadoop-style planners split files by. */
  private static final long SPLIT_SIZE_HINT = 128L << 20;

  static {
    Configuration.addDefaultResource("gpudirect-hadoop-default.xml");
  }

  /**
   * The statistics every gpudirect file system counts its reads in: Hadoop keeps one per scheme
   * and class, and Spark adds what a task's thread read in every scheme's to the task's input
   * bytes, where the UI's stages and {@code SparkListenerTaskEnd} show them.
   */
  @SuppressWarnings("deprecation") // the way to a scheme's statistics without an instance
  public static Statistics readStatistics() {
    return FileSystem.getStatistics(GpuDirectUri.SCHEME, GpuDirectFileSystem.class);
  }

  private URI uri;
  private GpuDirectUri server;
  private ResolvedOptions options;
  private Path workingDir;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    try {
      server = GpuDirectUri.parse(name.toString());
    } catch (GpuDirectException e) {
      throw new IOException(e.getMessage(), e);
    }
    uri = URI.create(GpuDirectUri.SCHEME + "://" + server.authority());
    workingDir = new Path(uri.toString() + "/");
    List<String> settings = new java.util.ArrayList<>();
    String prefix = io.gpudirect.options.GpuDirectOption.SESSION_PREFIX;
    conf.getPropsWithPrefix(prefix).keySet().forEach(k -> settings.add(prefix + k));
    io.gpudirect.options.UnknownOptions.checkSessionKeys(settings);
    // A conf a Spark session made (SessionState.newHadoopConf, broadcast as is to executors)
    // carries the session's whole conf, launch settings and spark.app.id among them: a key it
    // lacks, the session has unset (spark.conf.unset), and the SparkConf must not bring it back.
    // Other confs (the RDD API's sc.hadoopConfiguration, a new Configuration) carry no
    // spark.gpudirect key at all: those come from the running Spark's conf.
    boolean sessions = conf.get("spark.app.id") != null;
    try {
      options = ResolvedOptions.resolve(Map.of(), key -> {
        String v = conf.get(key);
        return v != null || sessions ? v : SparkConfLookup.get(key);
      });
    } catch (GpuDirectException e) {
      throw new IOException("Cannot use " + uri + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String getScheme() {
    return GpuDirectUri.SCHEME;
  }

  @Override
  public URI getUri() {
    return uri;
  }

  /** No delegation tokens: Spark and YARN skip a file system whose service name is null. */
  @Override
  public String getCanonicalServiceName() {
    return null;
  }

  @Override
  public long getDefaultBlockSize(Path f) {
    return SPLIT_SIZE_HINT;
  }

  /** The store's connections are shared by the JVM; closing this view leaves them open. */
  @Override
  public void close() throws IOException {
    super.close();
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    String path = remotePath(f);
    String qualified = qualify(f).toString();
    FileVersion expected = expectedVersion(qualified);
    FileEntry entry = statExpecting(f, path, expected);
    if (entry.directory()) {
      throw new FileNotFoundException("Cannot open " + qualified + ": it is a directory");
    }
    // Every read of the stream names this version, so the stream fails, rather than mix
    // bytes, once the file changes.
    FileVersion version = expected != null ? expected : entry.version();
    return new FSDataInputStream(new RemoteInputStream(store(), path, version, qualified, entry.length(),
        statistics, readAhead(qualified, path, version)));
  }

  /** The version the reader's conf names for this file (the scan's listing, see ExpectedVersion), or null. */
  private FileVersion expectedVersion(String qualified) {
    return ExpectedVersion.get(getConf(), u -> qualify(new Path(u)).toString(), qualified);
  }

  /**
   * The path's entry. With an {@code expected} version (the scan's listing), the entry that
   * version describes, without asking the server: every read of the stream names the version,
   * so a file changed since the listing fails its first read with FileChangedException, before
   * any byte of it is used. Parquet asks for the status and then opens: two round trips per
   * task saved, where a small scan costs only a few. Without one, a STAT.
   */
  private FileEntry statExpecting(Path f, String path, FileVersion expected) throws IOException {
    if (expected != null && expected.isChecked()) {
      return new FileEntry(path, expected.size(), expected.modifiedNanos() / 1_000_000, false, expected);
    }
    return stat(f, path);
  }

  /**
   * A read-ahead when this file system's conf carries the reader's plan for this file (see
   * {@link ReadPlan}) and the readAhead option is above 0.
   */
  private ReadAhead readAhead(String qualified, String path, FileVersion version) {
    long window = options.readAhead();
    ReadPlan plan = getConf() == null ? null : ReadPlan.get(getConf());
    if (window <= 0 || plan == null || plan.size() == 0
        || !qualify(new Path(plan.uri())).toString().equals(qualified)) {
      return null;
    }
    return new ReadAhead(store(), path, version, plan, window);
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return toStatus(statExpecting(f, remotePath(f), expectedVersion(qualify(f).toString())), qualify(f));
  }

  /**
   * The direct children of a directory. The server lists recursively; a sub-directory stands
   * for the files below it and carries the newest modification time among them.
   */
  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    String path = remotePath(f);
    FileEntry self = stat(f, path);
    if (!self.directory()) {
      return new FileStatus[] {toStatus(self, qualify(f))};
    }
    String prefix = path.isEmpty() ? "" : path + "/";
    Map<String, FileStatus> children = new LinkedHashMap<>();
    for (FileEntry e : call(f, () -> store().list(path))) {
      if (!e.path().startsWith(prefix)) {
        continue;
      }
      String rest = e.path().substring(prefix.length());
      int slash = rest.indexOf('/');
      if (slash < 0) {
        children.put(rest, toStatus(e, qualify(e.path())));
      } else {
        String dir = rest.substring(0, slash);
        FileStatus seen = children.get(dir);
        if (seen == null || seen.getModificationTime() < e.modifiedMillis()) {
          children.put(dir, new FileStatus(0, true, 1, 0, e.modifiedMillis(), qualify(prefix + dir)));
        }
      }
    }
    return children.values().toArray(new FileStatus[0]);
  }

  /** One location per file: the server's host, which is where its bytes come from. */
  @Override
  public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) {
    if (file == null || start < 0 || len < 0 || start >= file.getLen()) {
      return new BlockLocation[0];
    }
    return new BlockLocation[] {new BlockLocation(new String[] {server.authority()},
        new String[] {server.host()}, 0, file.getLen())};
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = makeQualified(dir);
  }

  // ---- everything that would change the server's files: refused, naming the path

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    throw readOnly("create", f);
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission, EnumSet<CreateFlag> flags,
      int bufferSize, short replication, long blockSize, Progressable progress) throws IOException {
    throw readOnly("create", f);
  }

  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress) throws IOException {
    throw readOnly("append to", f);
  }

  @Override
  public boolean truncate(Path f, long newLength) throws IOException {
    throw readOnly("truncate", f);
  }

  @Override
  public void concat(Path trg, Path[] psrcs) throws IOException {
    throw readOnly("concatenate into", trg);
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
  public boolean deleteOnExit(Path f) throws IOException {
    throw readOnly("delete", f);
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    throw readOnly("create directory", f);
  }

  @Override
  public void createSymlink(Path target, Path link, boolean createParent) throws IOException {
    throw readOnly("create symlink", link);
  }

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    throw readOnly("set the permission of", p);
  }

  @Override
  public void setOwner(Path p, String username, String groupname) throws IOException {
    throw readOnly("set the owner of", p);
  }

  @Override
  public void setTimes(Path p, long mtime, long atime) throws IOException {
    throw readOnly("set the times of", p);
  }

  @Override
  public boolean setReplication(Path src, short replication) throws IOException {
    throw readOnly("set the replication of", src);
  }

  @Override
  public void setXAttr(Path path, String name, byte[] value, EnumSet<XAttrSetFlag> flag) throws IOException {
    throw readOnly("set an extended attribute of", path);
  }

  @Override
  public void removeXAttr(Path path, String name) throws IOException {
    throw readOnly("remove an extended attribute of", path);
  }

  @Override
  public void setAcl(Path path, List<AclEntry> aclSpec) throws IOException {
    throw readOnly("set the ACL of", path);
  }

  @Override
  public void modifyAclEntries(Path path, List<AclEntry> aclSpec) throws IOException {
    throw readOnly("modify the ACL of", path);
  }

  @Override
  public void removeAclEntries(Path path, List<AclEntry> aclSpec) throws IOException {
    throw readOnly("modify the ACL of", path);
  }

  @Override
  public void removeDefaultAcl(Path path) throws IOException {
    throw readOnly("modify the ACL of", path);
  }

  @Override
  public void removeAcl(Path path) throws IOException {
    throw readOnly("modify the ACL of", path);
  }

  @Override
  public Path createSnapshot(Path path, String snapshotName) throws IOException {
    throw readOnly("create a snapshot of", path);
  }

  @Override
  public void renameSnapshot(Path path, String snapshotOldName, String snapshotNewName) throws IOException {
    throw readOnly("rename a snapshot of", path);
  }

  @Override
  public void deleteSnapshot(Path path, String snapshotName) throws IOException {
    throw readOnly("delete a snapshot of", path);
  }

  @Override
  public void setStoragePolicy(Path src, String policyName) throws IOException {
    throw readOnly("set the storage policy of", src);
  }

  @Override
  public void unsetStoragePolicy(Path src) throws IOException {
    throw readOnly("unset the storage policy of", src);
  }

  private IOException readOnly(String what, Path f) {
    return new IOException("Cannot " + what + " " + qualify(f)
        + ": gpudirect:// is read-only; the server only serves the files in its root directory");
  }

  // ---- helpers

  /** The JVM's shared store for this server; reconnects if the stores were closed meanwhile. */
  private RemoteStore store() {
    return RemoteStores.get(server, options);
  }

  private FileEntry stat(Path f, String path) throws IOException {
    return call(f, () -> store().stat(path));
  }

  /** Server refusals as Hadoop expects them: a missing path is a FileNotFoundException. */
  private <T> T call(Path f, java.util.function.Supplier<T> request) throws IOException {
    try {
      return request.get();
    } catch (RemoteFileException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        FileNotFoundException fnf = new FileNotFoundException("File not found: " + qualify(f)
            + " (" + e.getMessage() + ")");
        fnf.initCause(e);
        throw fnf;
      }
      throw new IOException(e.getMessage(), e);
    } catch (GpuDirectException e) {
      throw new IOException("Cannot reach " + qualify(f) + ": " + e.getMessage(), e);
    }
  }

  private FileStatus toStatus(FileEntry e, Path qualified) {
    return new FileStatus(e.length(), e.directory(), 1, SPLIT_SIZE_HINT, e.modifiedMillis(), qualified);
  }

  private Path qualify(String remotePath) {
    return new Path(uri.toString() + "/" + remotePath);
  }

  private Path qualify(Path f) {
    return makeQualified(f);
  }

  private String remotePath(Path f) {
    String p = makeQualified(f).toUri().getPath();
    while (p.startsWith("/")) {
      p = p.substring(1);
    }
    return p;
  }
}

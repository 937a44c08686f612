/*
 * S3Peers: the Java Iceberg peers of bench/s3/s3_bench.sh, on a table kept on an S3 server and
 * read through S3FileIO (iceberg-aws with the aws-bundle, the classpath of scripts/setup-java.sh).
 * Compiled by the script with javac against that classpath; it reuses the interop harness's
 * org.apache.iceberg.IcmDryExpire and IcmExpireControl (tests/interop/java).
 *
 *   S3Peers expire  --metadata S3_URI --older-than-ms MS [--warmup N] [--iterations N]
 *                   [--paths-out FILE]
 *       BenchExpire's measurement on S3: the metadata file is read once through S3FileIO, then
 *       each iteration runs ExpireSnapshots (RemoveSnapshots, reachable cleanup forced, as
 *       icemaint) on the in-memory metadata with retainLast(1); the delete callback only
 *       collects paths (nothing is deleted), the timer is around commit(). Java plans with its
 *       default worker pool (iceberg.worker.num-threads, max(2, CPUs)). Nothing is cached
 *       between iterations (S3FileIO has no manifest cache unless io.manifest.cache-enabled).
 *   S3Peers orphans --metadata S3_URI --older-than-ms MS [--warmup N] [--iterations N]
 *                   [--delete] [--orphans-out FILE]
 *       Java's orphan removal on S3, "DIY on core utilities" (core has no runnable action; this
 *       is what Spark's DeleteOrphanFilesSparkAction does with usePrefixListing(true), its listing
 *       through a FileIO with prefix operations; its default lists through Hadoop's S3A): the valid set (metadata files with
 *       their logs, the version hint, manifest lists, statistics, every distinct manifest and its live paths via
 *       ManifestFiles.readPaths, manifests read on the worker pool), the listing
 *       (FileSystemWalker.listDirRecursivelyWithFileIO: S3FileIO.listPrefix, one ListObjectsV2
 *       chain, with the partition-aware hidden-path filter and the age cutoff), the comparison of
 *       FileURI paths, and with --delete S3FileIO.deleteFiles of the orphans (DeleteObjects
 *       batches, s3.delete.batch-size, on S3FileIO's own delete pool).
 * S3FileIO is configured from --prop key=value (repeatable): s3.endpoint, s3.path-style-access,
 * s3.access-key-id, s3.secret-access-key, client.region.
 * Each iteration prints one JSON line {"phase", "seconds", "cpu_seconds", ...}; "cpu_seconds" is
 * the whole process's (all threads, GC and JIT).
 */
package dev.icemaint.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.IcmDryExpire;
import org.apache.iceberg.IcmExpireControl;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.actions.FileURI;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.util.FileSystemWalker;
import org.apache.iceberg.util.ThreadPools;

public final class S3Peers {
  private S3Peers() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> opts = new HashMap<>();
    Map<String, String> props = new HashMap<>();
    Set<String> flags = new HashSet<>();
    String mode = argv[0];
    for (int i = 1; i < argv.length; i++) {
      String k = argv[i].substring(2);
      if (k.equals("delete")) {
        flags.add(k);
      } else if (k.equals("prop")) {
        String kv = argv[++i];
        props.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
      } else {
        opts.put(k, argv[++i]);
      }
    }
    FileIO io = CatalogUtil.loadFileIO("org.apache.iceberg.aws.s3.S3FileIO", props,
        new Configuration());
    String metadata = opts.get("metadata");
    long olderThan = Long.parseLong(opts.get("older-than-ms"));
    int warmup = Integer.parseInt(opts.getOrDefault("warmup", "3"));
    int iterations = Integer.parseInt(opts.getOrDefault("iterations", "5"));
    if (mode.equals("expire")) {
      expire(io, metadata, olderThan, warmup, iterations, opts.get("paths-out"));
    } else if (mode.equals("orphans")) {
      orphans(io, metadata, olderThan, warmup, iterations, flags.contains("delete"),
          opts.get("orphans-out"));
    } else {
      throw new IllegalArgumentException("mode: expire or orphans");
    }
    System.exit(0); // the worker pools would keep the JVM alive a little longer
  }

  private static void expire(FileIO io, String metadata, long olderThan, int warmup,
      int iterations, String out) throws Exception {
    long t0 = System.nanoTime();
    TableMetadata base = TableMetadataParser.read(io, metadata);
    System.out.println("{\"phase\":\"load\",\"seconds\":" + secs(System.nanoTime() - t0)
        + ",\"snapshots\":" + base.snapshots().size() + "}");
    Set<String> deleted = new ConcurrentSkipListSet<>();
    for (int i = 0; i < warmup + iterations; i++) {
      deleted.clear();
      ExpireSnapshots expire = IcmDryExpire.create(base, io)
          .expireOlderThan(olderThan)
          .retainLast(1)
          .deleteWith(deleted::add);
      IcmExpireControl.useIncrementalCleanup(expire, false);
      long cpu0 = cpuNanos();
      long w0 = System.nanoTime();
      expire.commit();
      long w1 = System.nanoTime();
      long cpu1 = cpuNanos();
      System.out.println("{\"phase\":\"" + (i < warmup ? "warmup" : "timed") + "\",\"seconds\":"
          + secs(w1 - w0) + ",\"cpu_seconds\":" + secs(cpu1 - cpu0) + ",\"deleted\":"
          + deleted.size() + ",\"worker_threads\":" + ThreadPools.WORKER_THREAD_POOL_SIZE
          + "}");
    }
    if (out != null) {
      Files.write(Path.of(out), new TreeSet<>(deleted), StandardCharsets.UTF_8);
    }
  }

  private static void orphans(FileIO io, String metadata, long olderThan, int warmup,
      int iterations, boolean delete, String out) throws Exception {
    List<String> orphans = null;
    for (int i = 0; i < warmup + iterations; i++) {
      long cpu0 = cpuNanos();
      long w0 = System.nanoTime();
      Table table = new BaseTable(new StaticTableOperations(metadata, io), metadata);
      table.currentSnapshot();
      long w1 = System.nanoTime();
      Map<String, List<FileURI>> valid = validFiles(table, io);
      long w2 = System.nanoTime();
      List<String> listed = new ArrayList<>();
      FileSystemWalker.listDirRecursivelyWithFileIO((SupportsPrefixOperations) io,
          table.location(), table.specs(), f -> f.createdAtMillis() < olderThan, listed::add);
      long w3 = System.nanoTime();
      orphans = new ArrayList<>();
      for (String location : listed) {
        FileURI actual = toFileURI(location);
        List<FileURI> same = valid.get(actual.getPath());
        boolean matched = false;
        if (same != null) {
          for (FileURI v : same) {
            matched |= v.schemeMatch(actual) && v.authorityMatch(actual);
          }
        }
        if (!matched) {
          orphans.add(location);
        }
      }
      long w4 = System.nanoTime();
      if (delete) {
        ((SupportsBulkOperations) io).deleteFiles(orphans);
      }
      long w5 = System.nanoTime();
      long cpu1 = cpuNanos();
      System.out.println("{\"phase\":\"" + (i < warmup ? "warmup" : "timed") + "\",\"seconds\":"
          + secs(w5 - w0) + ",\"cpu_seconds\":" + secs(cpu1 - cpu0) + ",\"load_seconds\":"
          + secs(w1 - w0) + ",\"valid_seconds\":" + secs(w2 - w1) + ",\"listing_seconds\":"
          + secs(w3 - w2) + ",\"compare_seconds\":" + secs(w4 - w3) + ",\"delete_seconds\":"
          + secs(w5 - w4) + ",\"valid\":" + valid.size() + ",\"listed\":" + listed.size()
          + ",\"orphans\":" + orphans.size() + ",\"deleted\":" + delete + "}");
    }
    if (out != null && orphans != null) {
      Files.write(Path.of(out), new TreeSet<>(orphans), StandardCharsets.UTF_8);
    }
  }

  private static Map<String, List<FileURI>> validFiles(Table table, FileIO io) throws Exception {
    List<String> paths = new ArrayList<>();
    paths.addAll(ReachableFileUtil.metadataFileLocations(table, true));
    paths.add(ReachableFileUtil.versionHintLocation(table));
    paths.addAll(ReachableFileUtil.statisticsFilesLocations(table));
    paths.addAll(ReachableFileUtil.manifestListLocations(table));
    Map<String, ManifestFile> manifests = new LinkedHashMap<>();
    for (Snapshot snapshot : table.snapshots()) {
      for (ManifestFile m : snapshot.allManifests(io)) {
        manifests.putIfAbsent(m.path(), m);
      }
    }
    paths.addAll(manifests.keySet());
    ExecutorService pool = ThreadPools.getWorkerPool();
    List<Future<List<String>>> reads = new ArrayList<>();
    for (ManifestFile m : manifests.values()) {
      reads.add(pool.submit(() -> {
        List<String> found = new ArrayList<>();
        try (CloseableIterable<String> it = ManifestFiles.readPaths(m, io, table.specs())) {
          it.forEach(found::add);
        }
        return found;
      }));
    }
    for (Future<List<String>> f : reads) {
      paths.addAll(f.get());
    }
    Map<String, List<FileURI>> byPath = new HashMap<>(paths.size() * 4 / 3 + 1);
    for (String p : paths) {
      FileURI uri = toFileURI(p);
      byPath.computeIfAbsent(uri.getPath(), k -> new ArrayList<>(1)).add(uri);
    }
    return byPath;
  }

  private static final Map<String, String> EQUAL_SCHEMES =
      new HashMap<>(Map.of("s3n", "s3", "s3a", "s3"));

  private static FileURI toFileURI(String location) {
    URI uri = new org.apache.hadoop.fs.Path(location).toUri();
    String scheme = EQUAL_SCHEMES.getOrDefault(uri.getScheme(), uri.getScheme());
    return new FileURI(scheme, uri.getAuthority(), uri.getPath(), location);
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static String secs(long nanos) {
    return String.format(Locale.ROOT, "%.4f", nanos / 1e9);
  }
}

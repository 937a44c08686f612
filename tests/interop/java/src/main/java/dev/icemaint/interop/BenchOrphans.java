/*
 * BenchOrphans: a dry-run orphan-file computation built only from public Iceberg core calls, the
 * Java peer of `icemaint remove-orphan-files --dry-run` in docs/BENCHMARKS.md. Iceberg core has
 * no runnable orphan-removal action (only Spark's DeleteOrphanFilesSparkAction and Flink's
 * maintenance job), so this driver does the work Spark's action does, minus Spark; label its
 * results "DIY on core utilities", not "upstream tool".
 *
 * One computation (all of it timed):
 *   1. load the table read-only without a catalog: version-hint.text names vN.metadata.json,
 *      opened with StaticTableOperations over HadoopFileIO;
 *   2. valid set, as Spark's validFileIdentDS: every metadata file of the metadata log
 *      (ReachableFileUtil.metadataFileLocations; recursive, see RECURSIVE_METADATA_LOG), the
 *      version hint, the statistics files, every snapshot's manifest list, every distinct manifest
 *      of every snapshot (Snapshot.allManifests) and the live entries of each distinct manifest
 *      (ManifestFiles.readPaths, which opens data and delete manifests alike);
 *   3. actual set, as Spark's default (non-prefix) listing: FileSystemWalker.
 *      listDirRecursivelyWithHadoop with its partition-aware hidden-path filter, keeping files
 *      modified before the cutoff. With --threads 1 one walk lists everything; with more, the
 *      "driver" walks 3 levels and up to 10 sub-directories per level (Spark's constants) and a
 *      pool lists the directories handed over, as Spark's executors do;
 *   4. compare, as Spark's findOrphanFiles: both sides become FileURI (scheme and authority mapped
 *      through the equal-schemes map, default s3n,s3a=s3), joined on the URI path; a listed file
 *      with no valid path is an orphan; one whose path matches only with another scheme or
 *      authority is a conflict (refused in the default "error" mode, like Spark).
 * Nothing is deleted.
 *
 * Usage: BenchOrphans --table DIR --older-than-ms MS [--metadata FILE] [--location DIR]
 *        [--warmup N] [--iterations N] [--threads N] [--prefix-mismatch error|ignore|delete]
 *        [--orphans-out FILE]
 * Each run prints one JSON line: {"phase" (warmup/timed), "seconds" (wall), "cpu_seconds" (the
 * whole process, all threads, GC and JIT included), "load_seconds", "valid_seconds",
 * "listing_seconds", "compare_seconds", "valid", "manifests", "listed", "orphans"}; then a
 * summary line with the best and every timed wall time. --orphans-out writes the sorted orphan
 * locations of the last run (as listed, e.g. file:/...), one per line.
 */
package dev.icemaint.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.actions.FileURI;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.util.FileSystemWalker;

public final class BenchOrphans {
  /*
   * Spark's action passes false (only the current file's metadata log); true also follows the
   * logs of older metadata files. Both give the same set for a table whose metadata files all
   * carry their full log; true keeps more when they do not, the safe side for a sweep.
   */
  private static final boolean RECURSIVE_METADATA_LOG = true;
  /* Spark's driver-side listing limits (DeleteOrphanFilesSparkAction) and executor depth. */
  private static final int DRIVER_DEPTH = 3;
  private static final int DRIVER_DIRECT_SUB_DIRS = 10;
  private static final int WORKER_DEPTH = 2000;

  private final Configuration conf = new Configuration();
  private final HadoopFileIO io = new HadoopFileIO(conf);
  /* HashMaps: a location without a scheme looks up a null key, which Map.of rejects. */
  private final Map<String, String> equalSchemes = new HashMap<>(Map.of("s3n", "s3", "s3a", "s3"));
  private final Map<String, String> equalAuthorities = new HashMap<>();
  private final String metadataLocation;
  private final String listRoot;
  private final long olderThanMs;
  private final String prefixMismatch;
  private final ExecutorService pool;

  /** Per-run counts and phase times (nanoseconds). */
  private static final class Run {
    long loadNs;
    long validNs;
    long listingNs;
    long compareNs;
    int valid;
    int manifests;
    int listed;
    List<String> orphans;
  }

  private BenchOrphans(String metadataLocation, String listRoot, long olderThanMs,
      String prefixMismatch, int threads) {
    this.metadataLocation = metadataLocation;
    this.listRoot = listRoot;
    this.olderThanMs = olderThanMs;
    this.prefixMismatch = prefixMismatch;
    this.pool = threads > 1 ? Executors.newFixedThreadPool(threads) : null;
  }

  public static void main(String[] argv) throws Exception {
    Harness.Args a = Harness.Args.parse(argv, Set.of());
    String tableDir = stripSlash(a.require("table"));
    String metadata = a.get("metadata", null);
    if (metadata == null) {
      metadata = currentMetadata(tableDir);
    }
    String mode = a.get("prefix-mismatch", "error");
    if (!Set.of("error", "ignore", "delete").contains(mode)) {
      throw new IllegalArgumentException("--prefix-mismatch: use error, ignore or delete");
    }
    BenchOrphans bench = new BenchOrphans(metadata, a.get("location", null),
        Long.parseLong(a.require("older-than-ms")), mode,
        Integer.parseInt(a.get("threads", "1")));
    int warmup = Integer.parseInt(a.get("warmup", "3"));
    int iterations = Integer.parseInt(a.get("iterations", "5"));

    List<Double> timed = new ArrayList<>();
    Run last = null;
    for (int i = 0; i < warmup + iterations; i++) {
      long cpu0 = processCpuNanos();
      long w0 = System.nanoTime();
      last = bench.computeOrphans();
      long w1 = System.nanoTime();
      long cpu1 = processCpuNanos();
      if (i >= warmup) {
        timed.add((w1 - w0) / 1e9);
      }
      System.out.println("{\"phase\":\"" + (i < warmup ? "warmup" : "timed") + "\",\"seconds\":"
          + secs(w1 - w0) + ",\"cpu_seconds\":" + secs(cpu1 - cpu0) + ",\"load_seconds\":"
          + secs(last.loadNs) + ",\"valid_seconds\":" + secs(last.validNs)
          + ",\"listing_seconds\":" + secs(last.listingNs) + ",\"compare_seconds\":"
          + secs(last.compareNs) + ",\"valid\":" + last.valid + ",\"manifests\":"
          + last.manifests + ",\"listed\":" + last.listed + ",\"orphans\":"
          + last.orphans.size() + "}");
    }
    StringBuilder all = new StringBuilder();
    for (double t : timed) {
      all.append(all.length() == 0 ? "" : ",").append(String.format(java.util.Locale.ROOT,
          "%.4f", t));
    }
    System.out.println("{\"phase\":\"summary\",\"best_seconds\":"
        + (timed.isEmpty() ? "null" : String.format(java.util.Locale.ROOT, "%.4f",
            Collections.min(timed)))
        + ",\"timed_seconds\":[" + all + "],\"metadata\":\"" + metadata + "\"}");
    String out = a.get("orphans-out", null);
    if (out != null && last != null) {
      Files.write(Path.of(out), new TreeSet<>(last.orphans), StandardCharsets.UTF_8);
    }
    System.exit(0); // a worker pool would otherwise keep the JVM alive
  }

  /** The metadata file a filesystem-layout (Hadoop) table's version hint names. */
  private static String currentMetadata(String tableDir) throws IOException {
    String hint = Files.readString(Path.of(tableDir, "metadata", "version-hint.text")).trim();
    return tableDir + "/metadata/v" + Integer.parseInt(hint) + ".metadata.json";
  }

  private Run computeOrphans() throws Exception {
    Run run = new Run();
    long t0 = System.nanoTime();
    StaticTableOperations ops = new StaticTableOperations(metadataLocation, io);
    Table table = new BaseTable(ops, metadataLocation);
    table.currentSnapshot(); // parses the metadata file now, inside the load phase
    long t1 = System.nanoTime();
    Map<String, List<FileURI>> valid = validFiles(table, run);
    long t2 = System.nanoTime();
    List<String> listed = listFiles(table, listRoot != null ? listRoot : table.location());
    long t3 = System.nanoTime();
    run.orphans = findOrphans(listed, valid);
    long t4 = System.nanoTime();
    run.loadNs = t1 - t0;
    run.validNs = t2 - t1;
    run.listingNs = t3 - t2;
    run.compareNs = t4 - t3;
    run.listed = listed.size();
    return run;
  }

  /** Every file the table's metadata references, keyed by normalised URI path. */
  private Map<String, List<FileURI>> validFiles(Table table, Run run) throws Exception {
    List<String> paths = new ArrayList<>();
    paths.addAll(ReachableFileUtil.metadataFileLocations(table, RECURSIVE_METADATA_LOG));
    paths.add(ReachableFileUtil.versionHintLocation(table));
    paths.addAll(ReachableFileUtil.statisticsFilesLocations(table));
    paths.addAll(ReachableFileUtil.manifestListLocations(table));
    Map<String, ManifestFile> manifests = new LinkedHashMap<>(); // distinct, by path
    for (Snapshot snapshot : table.snapshots()) {
      for (ManifestFile m : snapshot.allManifests(table.io())) {
        manifests.putIfAbsent(m.path(), m);
      }
    }
    paths.addAll(manifests.keySet());
    run.manifests = manifests.size();
    for (List<String> entries : forEach(new ArrayList<>(manifests.values()),
        m -> readPaths(m, table.io(), table.specs()))) {
      paths.addAll(entries);
    }
    Map<String, List<FileURI>> byPath = new HashMap<>(paths.size() * 4 / 3 + 1);
    for (String p : paths) {
      FileURI uri = toFileURI(p);
      List<FileURI> same = byPath.computeIfAbsent(uri.getPath(), k -> new ArrayList<>(1));
      if (!containsSamePrefix(same, uri)) {
        same.add(uri);
      }
    }
    run.valid = byPath.size();
    return byPath;
  }

  private static boolean containsSamePrefix(List<FileURI> uris, FileURI uri) {
    for (FileURI u : uris) {
      if (java.util.Objects.equals(u.getScheme(), uri.getScheme())
          && java.util.Objects.equals(u.getAuthority(), uri.getAuthority())) {
        return true;
      }
    }
    return false;
  }

  private static List<String> readPaths(ManifestFile manifest, FileIO io,
      Map<Integer, PartitionSpec> specs) {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<String> it = ManifestFiles.readPaths(manifest, io, specs)) {
      it.forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** Files under root modified before the cutoff, hidden paths left out (Spark's listing). */
  private List<String> listFiles(Table table, String root) throws Exception {
    Predicate<FileStatus> oldEnough = f -> f.getModificationTime() < olderThanMs;
    List<String> files = new ArrayList<>();
    List<String> handedOver = new ArrayList<>();
    if (pool == null) {
      FileSystemWalker.listDirRecursivelyWithHadoop(root, table.specs(), oldEnough, conf,
          WORKER_DEPTH, Integer.MAX_VALUE, handedOver::add, files::add);
    } else {
      FileSystemWalker.listDirRecursivelyWithHadoop(root, table.specs(), oldEnough, conf,
          DRIVER_DEPTH, DRIVER_DIRECT_SUB_DIRS, handedOver::add, files::add);
      List<String> dirs = new ArrayList<>(handedOver);
      handedOver.clear();
      for (List<String> part : forEach(dirs, dir -> {
        List<String> found = new ArrayList<>();
        List<String> tooDeep = new ArrayList<>();
        FileSystemWalker.listDirRecursivelyWithHadoop(dir, table.specs(), oldEnough, conf,
            WORKER_DEPTH, Integer.MAX_VALUE, tooDeep::add, found::add);
        if (!tooDeep.isEmpty()) {
          throw new IllegalStateException("listing deeper than " + WORKER_DEPTH + ": " + dir);
        }
        return found;
      })) {
        files.addAll(part);
      }
    }
    if (!handedOver.isEmpty()) {
      throw new IllegalStateException("listing deeper than " + WORKER_DEPTH + ": " + handedOver);
    }
    return files;
  }

  /**
   * Listed files that no valid path matches. A path match with a different scheme or authority
   * is a conflict: kept in "error" mode (and the run fails, as Spark's action throws) and in
   * "ignore" mode, an orphan in "delete" mode.
   */
  private List<String> findOrphans(List<String> listed, Map<String, List<FileURI>> valid) {
    List<String> orphans = new ArrayList<>();
    Set<String> conflicts = new TreeSet<>();
    for (String location : listed) {
      FileURI actual = toFileURI(location);
      List<FileURI> candidates = valid.get(actual.getPath());
      if (candidates == null) {
        orphans.add(actual.getUriAsString());
        continue;
      }
      boolean matched = false;
      for (FileURI v : candidates) {
        matched |= v.schemeMatch(actual) && v.authorityMatch(actual);
      }
      if (!matched) {
        if (prefixMismatch.equals("delete")) {
          orphans.add(actual.getUriAsString());
        } else {
          conflicts.add(candidates.get(0).getUriAsString() + " vs " + location);
        }
      }
    }
    if (!conflicts.isEmpty() && prefixMismatch.equals("error")) {
      throw new IllegalStateException("files match referenced ones only up to scheme or "
          + "authority (" + conflicts.size() + "), e.g. " + conflicts.iterator().next());
    }
    return orphans;
  }

  /** Scheme, authority and path of a location, as Spark's ToFileURI splits it. */
  private FileURI toFileURI(String location) {
    URI uri = new org.apache.hadoop.fs.Path(location).toUri();
    String scheme = equalSchemes.getOrDefault(uri.getScheme(), uri.getScheme());
    String authority = equalAuthorities.getOrDefault(uri.getAuthority(), uri.getAuthority());
    return new FileURI(scheme, authority, uri.getPath(), location);
  }

  private interface Task<I, O> {
    O apply(I input) throws Exception;
  }

  /** fn over every input, on the pool when there is one; results in input order. */
  private <I, O> List<O> forEach(List<I> inputs, Task<I, O> fn) throws Exception {
    List<O> out = new ArrayList<>(inputs.size());
    if (pool == null) {
      for (I in : inputs) {
        out.add(fn.apply(in));
      }
      return out;
    }
    List<Future<O>> futures = new ArrayList<>(inputs.size());
    for (I in : inputs) {
      futures.add(pool.submit(() -> fn.apply(in)));
    }
    for (Future<O> f : futures) {
      out.add(f.get());
    }
    return out;
  }

  private static String stripSlash(String dir) {
    return dir.length() > 1 && dir.endsWith("/") ? dir.substring(0, dir.length() - 1) : dir;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static String secs(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.4f", nanos / 1e9);
  }
}

/*
 * RestPeers: the Java Iceberg peer of bench/rest/rest_bench.sh, on a table behind a REST catalog
 * whose files are on S3: the table is loaded through RESTCatalog (iceberg-core 1.12, the
 * classpath of scripts/setup-java.sh), which asks for vended credentials, and its files are read
 * and deleted through the FileIO the catalog builds from the load-table `config` merged over the
 * catalog properties (S3FileIO for s3:// through ResolvingFileIO). Compiled by the script with
 * javac against that classpath; the dry expiry reuses the interop harness's IcmDryExpire.
 *
 *   RestPeers expire  --uri URI --table NS.NAME --older-than-ms MS --retain-last K
 *                     [--dry-run] [--paths-out FILE] [--prop k=v]...
 *       Real run: Table.expireSnapshots().expireOlderThan(MS).retainLast(K).commit() as a user
 *       runs it (the commit goes to the catalog, then Java's own cleanup deletes the expired
 *       files with S3FileIO's bulk delete). Dry run: Java has no dry run through a catalog (its
 *       file cleanup runs only after a commit), so the loaded metadata is expired in memory
 *       (IcmDryExpire: same RemoveSnapshots decision and cleanup, incremental or reachable as
 *       Java picks, every delete collected into --paths-out, nothing committed or deleted).
 *   RestPeers orphans --uri URI --table NS.NAME --older-than-ms MS [--delete]
 *                     [--orphans-out FILE] [--prop k=v]...
 *       Java's orphan removal "DIY on core utilities" (core has no runnable action; this is what
 *       Spark's DeleteOrphanFilesSparkAction does with usePrefixListing(true)): the valid set
 *       (metadata files with their logs, manifest lists, statistics, every distinct manifest and
 *       its paths via ManifestFiles.readPaths on the worker pool), the listing of the table
 *       location through the FileIO's prefix listing with the hidden-path filter and the age
 *       cutoff, the FileURI comparison, and with --delete the FileIO's bulk delete.
 * --prop key=value (repeatable) are catalog properties (s3.endpoint, s3.path-style-access,
 * client.region, ...; no keys: the catalog vends them). Prints one JSON line with the phases.
 */
package dev.icemaint.bench;

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
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.IcmDryExpire;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.actions.FileURI;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.util.FileSystemWalker;
import org.apache.iceberg.util.ThreadPools;

public final class RestPeers {
  private RestPeers() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> opts = new HashMap<>();
    Map<String, String> props = new HashMap<>();
    Set<String> flags = new HashSet<>();
    String mode = argv[0];
    for (int i = 1; i < argv.length; i++) {
      String k = argv[i].substring(2);
      if (k.equals("delete") || k.equals("dry-run")) {
        flags.add(k);
      } else if (k.equals("prop")) {
        String kv = argv[++i];
        props.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
      } else {
        opts.put(k, argv[++i]);
      }
    }
    props.put(CatalogProperties.URI, opts.get("uri"));
    props.put(CatalogUtil.ICEBERG_CATALOG_TYPE, CatalogUtil.ICEBERG_CATALOG_TYPE_REST);
    long t0 = System.nanoTime();
    Catalog catalog = CatalogUtil.buildIcebergCatalog("bench", props, new Configuration());
    Table table = catalog.loadTable(TableIdentifier.parse(opts.get("table")));
    long t1 = System.nanoTime();
    long olderThan = Long.parseLong(opts.get("older-than-ms"));
    String head = "{\"mode\":\"" + mode + "\",\"load_seconds\":" + secs(t1 - t0);
    if (mode.equals("expire")) {
      int retainLast = Integer.parseInt(opts.get("retain-last"));
      if (flags.contains("dry-run")) {
        TableMetadata base = ((HasTableOperations) table).operations().current();
        Set<String> deleted = new ConcurrentSkipListSet<>();
        IcmDryExpire.create(base, table.io()).expireOlderThan(olderThan).retainLast(retainLast)
            .deleteWith(deleted::add).commit();
        System.out.println(head + ",\"expire_seconds\":" + secs(System.nanoTime() - t1)
            + ",\"planned_deletes\":" + deleted.size() + ",\"dry_run\":true}");
        if (opts.containsKey("paths-out")) {
          Files.write(Path.of(opts.get("paths-out")), new TreeSet<>(deleted),
              StandardCharsets.UTF_8);
        }
      } else {
        int before = size(table.snapshots());
        ExpireSnapshots expire =
            table.expireSnapshots().expireOlderThan(olderThan).retainLast(retainLast);
        expire.commit();
        table.refresh();
        System.out.println(head + ",\"expire_seconds\":" + secs(System.nanoTime() - t1)
            + ",\"snapshots_before\":" + before + ",\"snapshots_after\":"
            + size(table.snapshots()) + ",\"dry_run\":false}");
      }
    } else if (mode.equals("orphans")) {
      FileIO io = table.io();
      Map<String, List<FileURI>> valid = validFiles(table, io);
      long t2 = System.nanoTime();
      List<String> listed = new ArrayList<>();
      FileSystemWalker.listDirRecursivelyWithFileIO((SupportsPrefixOperations) io,
          table.location(), table.specs(), f -> f.createdAtMillis() < olderThan, listed::add);
      long t3 = System.nanoTime();
      List<String> orphans = new ArrayList<>();
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
      long t4 = System.nanoTime();
      boolean delete = flags.contains("delete");
      if (delete && !orphans.isEmpty()) {
        ((SupportsBulkOperations) io).deleteFiles(orphans);
      }
      long t5 = System.nanoTime();
      System.out.println(head + ",\"valid_seconds\":" + secs(t2 - t1) + ",\"listing_seconds\":"
          + secs(t3 - t2) + ",\"compare_seconds\":" + secs(t4 - t3) + ",\"delete_seconds\":"
          + secs(t5 - t4) + ",\"valid\":" + valid.size() + ",\"listed\":" + listed.size()
          + ",\"orphans\":" + orphans.size() + ",\"deleted\":" + delete + "}");
      if (opts.containsKey("orphans-out")) {
        Files.write(Path.of(opts.get("orphans-out")), new TreeSet<>(orphans),
            StandardCharsets.UTF_8);
      }
    } else {
      throw new IllegalArgumentException("mode: expire or orphans");
    }
    System.exit(0); // the worker pools would keep the JVM alive a little longer
  }

  private static int size(Iterable<?> it) {
    int n = 0;
    for (Object ignored : it) {
      n++;
    }
    return n;
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

  private static String secs(long nanos) {
    return String.format(Locale.ROOT, "%.4f", nanos / 1e9);
  }
}

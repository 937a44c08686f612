/*
 * GenerateTables: writes the table shapes that only Java Iceberg can produce (merge-on-read
 * position and equality deletes, position deletes alone, a staged WAP snapshot and its cherry-pick, statistics and
 * partition-statistics files, format v3 with deletion vectors) into the shared SQL catalog.
 * tests/interop/shapes.py names these shapes and calls this tool once for all of them.
 *
 * Usage: GenerateTables --uri JDBC_URL --warehouse DIR [--catalog NAME] [--namespace NS]
 *        [--seed N] SHAPE...
 * Prints one JSON line per shape: {"shape": NAME, "table": "ns.name"}.
 * Data comes from java.util.Random seeded with the seed and the shape name, so rows are the same
 * on every run (snapshot ids and timestamps are not: Iceberg picks those).
 */
package dev.icemaint.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.GenericBlobMetadata;
import org.apache.iceberg.GenericStatisticsFile;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionStatisticsFile;
import org.apache.iceberg.PartitionStatsHandler;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.puffin.Blob;
import org.apache.iceberg.puffin.Puffin;
import org.apache.iceberg.puffin.PuffinWriter;
import org.apache.iceberg.types.Types;

public final class GenerateTables {
  /** Same columns as the PyIceberg shapes (tests/interop/shapes.py ROW_SCHEMA). */
  static final Schema SCHEMA = new Schema(
      Types.NestedField.optional(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "category", Types.StringType.get()),
      Types.NestedField.optional(3, "value", Types.IntegerType.get()),
      Types.NestedField.optional(4, "day", Types.DateType.get()));

  private static final String[] CATEGORIES = {"a", "b", "c", "d"};

  private final JdbcCatalog catalog;
  private final String namespace;
  private final long seed;
  private long fileCounter = 0;

  private GenerateTables(JdbcCatalog catalog, String namespace, long seed) {
    this.catalog = catalog;
    this.namespace = namespace;
    this.seed = seed;
  }

  public static void main(String[] argv) throws Exception {
    Harness.Args a = Harness.Args.parse(argv, Set.of());
    try (JdbcCatalog catalog = Harness.openCatalog(a)) {
      String ns = a.get("namespace", "java");
      if (!catalog.namespaceExists(Namespace.of(ns))) {
        catalog.createNamespace(Namespace.of(ns));
      }
      GenerateTables gen = new GenerateTables(catalog, ns, Long.parseLong(a.get("seed", "42")));
      for (String shape : a.positional) {
        gen.build(shape);
        System.out.println("{\"shape\":" + Harness.json(shape) + ",\"table\":"
            + Harness.json(ns + "." + shape) + "}");
        System.out.flush();
      }
    }
  }

  private void build(String shape) throws IOException {
    Random rnd = new Random(seed ^ shape.hashCode());
    switch (shape) {
      case "java_mor_deletes" -> morDeletes(rnd);
      case "java_pos_deletes" -> positionDeletes(rnd);
      case "java_wap_cherrypick" -> wapCherrypick(rnd);
      case "java_statistics" -> statistics(rnd);
      case "java_v3_dv" -> v3DeletionVectors(rnd);
      default -> throw new IllegalArgumentException("unknown Java shape: " + shape);
    }
  }

  // ---- shapes ----------------------------------------------------------------------------------

  /** v2, merge-on-read: two data files, a position-delete file, an equality-delete file, more data. */
  private void morDeletes(Random rnd) throws IOException {
    Table t = create("java_mor_deletes", PartitionSpec.unpartitioned(), 2, Map.of(
        TableProperties.DELETE_MODE, "merge-on-read",
        TableProperties.UPDATE_MODE, "merge-on-read",
        TableProperties.MERGE_MODE, "merge-on-read"));
    DataFile a = writeData(t, rows(rnd, 0, 50), null);
    DataFile b = writeData(t, rows(rnd, 50, 50), null);
    t.newAppend().appendFile(a).appendFile(b).commit();

    DeleteFile pos = writePositionDeletes(t, a.location(), new long[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    t.newRowDelta().addDeletes(pos).commit();

    DeleteFile eq = writeEqualityDeletes(t, new long[] {60, 61, 62, 63, 64, 65});
    t.newRowDelta().addDeletes(eq).commit();

    t.newAppend().appendFile(writeData(t, rows(rnd, 100, 30), null)).commit();
  }

  /** v2, merge-on-read position deletes only (readable by every judge): data, deletes, data. */
  private void positionDeletes(Random rnd) throws IOException {
    Table t = create("java_pos_deletes", PartitionSpec.unpartitioned(), 2,
        Map.of(TableProperties.DELETE_MODE, "merge-on-read"));
    DataFile a = writeData(t, rows(rnd, 0, 30), null);
    t.newAppend().appendFile(a).commit();
    t.newRowDelta().addDeletes(writePositionDeletes(t, a.location(), new long[] {2, 4, 6})).commit();
    t.newAppend().appendFile(writeData(t, rows(rnd, 30, 10), null)).commit();
  }

  /**
   * WAP: a staged snapshot (never current), a main-line append after it, then a cherry-pick of
   * the staged snapshot onto main; a second staged snapshot stays unpublished.
   */
  private void wapCherrypick(Random rnd) throws IOException {
    Table t = create("java_wap_cherrypick", PartitionSpec.unpartitioned(), 2,
        Map.of(TableProperties.WRITE_AUDIT_PUBLISH_ENABLED, "true"));
    t.newAppend().appendFile(writeData(t, rows(rnd, 0, 20), null)).commit();
    long staged = stage(t, writeData(t, rows(rnd, 20, 20), null), "wap-1");
    t.newAppend().appendFile(writeData(t, rows(rnd, 40, 20), null)).commit();
    stage(t, writeData(t, rows(rnd, 60, 20), null), "wap-2");
    t.manageSnapshots().cherrypick(staged).commit();
  }

  /** Partitioned v2 table with a Puffin statistics file and a partition-statistics file. */
  private void statistics(Random rnd) throws IOException {
    Schema schema = SCHEMA;
    PartitionSpec spec = PartitionSpec.builderFor(schema).identity("category").build();
    Table t = create("java_statistics", spec, 2, Map.of());
    appendPartitioned(t, rows(rnd, 0, 40));
    setStatistics(t, t.currentSnapshot());
    appendPartitioned(t, rows(rnd, 40, 40));
    setStatistics(t, t.currentSnapshot());
    t.refresh();
    PartitionStatisticsFile psf =
        PartitionStatsHandler.computeAndWriteStatsFile(t, t.currentSnapshot().snapshotId());
    t.updatePartitionStatistics().setPartitionStatistics(psf).commit();
    appendPartitioned(t, rows(rnd, 80, 40));
  }

  /** Format v3 with deletion vectors: one DV per data file, the second replacing an earlier DV. */
  private void v3DeletionVectors(Random rnd) throws IOException {
    Table t = create("java_v3_dv", PartitionSpec.unpartitioned(), 3, Map.of(
        TableProperties.DELETE_MODE, "merge-on-read"));
    DataFile a = writeData(t, rows(rnd, 0, 40), null);
    DataFile b = writeData(t, rows(rnd, 40, 40), null);
    t.newAppend().appendFile(a).appendFile(b).commit();

    DeleteFile dvA = writeDV(t, a, new long[] {1, 3, 5});
    t.newRowDelta().addDeletes(dvA).commit();

    DeleteFile dvB = writeDV(t, b, new long[] {0, 39});
    t.newRowDelta().addDeletes(dvB).commit();

    // A DV for `a` covering more rows replaces the first one (v3 allows one DV per data file).
    DeleteFile dvA2 = writeDV(t, a, new long[] {1, 3, 5, 7, 9});
    t.refresh();
    // Validating from the current snapshot tells Java the first DV is not a concurrent add.
    t.newRowDelta().addDeletes(dvA2).removeDeletes(dvA)
        .validateFromSnapshot(t.currentSnapshot().snapshotId()).commit();
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private Table create(String name, PartitionSpec spec, int formatVersion, Map<String, String> props) {
    Map<String, String> all = new TreeMap<>(props);
    all.put(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion));
    return catalog.buildTable(TableIdentifier.of(namespace, name), SCHEMA)
        .withPartitionSpec(spec).withProperties(all).create();
  }

  private static List<Record> rows(Random rnd, long firstId, int n) {
    List<Record> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Record r = GenericRecord.create(SCHEMA);
      r.setField("id", firstId + i);
      r.setField("category", CATEGORIES[rnd.nextInt(CATEGORIES.length)]);
      // Some nulls, so the fingerprint's null encoding is exercised too.
      r.setField("value", rnd.nextInt(10) == 0 ? null : rnd.nextInt(1000));
      r.setField("day", LocalDate.of(2024, 1, 1).plusDays(rnd.nextInt(60)));
      out.add(r);
    }
    return out;
  }

  private OutputFileFactory files(Table t, FileFormat format) {
    return OutputFileFactory.builderFor(t, 1, ++fileCounter).format(format).build();
  }

  private DataFile writeData(Table t, List<Record> rows, StructLike partition) throws IOException {
    GenericFileWriterFactory wf = new GenericFileWriterFactory.Builder(t)
        .dataFileFormat(FileFormat.PARQUET).build();
    OutputFileFactory of = files(t, FileFormat.PARQUET);
    var out = partition == null ? of.newOutputFile() : of.newOutputFile(t.spec(), partition);
    DataWriter<Record> w = wf.newDataWriter(out, t.spec(), partition);
    try (w) {
      for (Record r : rows) {
        w.write(r);
      }
    }
    return w.toDataFile();
  }

  private void appendPartitioned(Table t, List<Record> rows) throws IOException {
    Map<String, List<Record>> byCategory = new TreeMap<>();
    for (Record r : rows) {
      byCategory.computeIfAbsent((String) r.getField("category"), k -> new ArrayList<>()).add(r);
    }
    AppendFiles append = t.newAppend();
    for (List<Record> group : byCategory.values()) {
      PartitionKey key = new PartitionKey(t.spec(), t.schema());
      key.partition(group.get(0));
      append.appendFile(writeData(t, group, key));
    }
    append.commit();
  }

  private DeleteFile writePositionDeletes(Table t, String dataPath, long[] positions) throws IOException {
    GenericFileWriterFactory wf = new GenericFileWriterFactory.Builder(t)
        .deleteFileFormat(FileFormat.PARQUET).build();
    PositionDeleteWriter<Record> w =
        wf.newPositionDeleteWriter(files(t, FileFormat.PARQUET).newOutputFile(), t.spec(), null);
    PositionDelete<Record> pd = PositionDelete.create();
    try (w) {
      for (long p : positions) {
        w.write(pd.set(dataPath, p));
      }
    }
    return w.toDeleteFile();
  }

  private DeleteFile writeEqualityDeletes(Table t, long[] ids) throws IOException {
    Schema idOnly = t.schema().select("id");
    GenericFileWriterFactory wf = new GenericFileWriterFactory.Builder(t)
        .deleteFileFormat(FileFormat.PARQUET)
        .equalityFieldIds(new int[] {t.schema().findField("id").fieldId()})
        .equalityDeleteRowSchema(idOnly).build();
    EqualityDeleteWriter<Record> w =
        wf.newEqualityDeleteWriter(files(t, FileFormat.PARQUET).newOutputFile(), t.spec(), null);
    try (w) {
      for (long id : ids) {
        Record r = GenericRecord.create(idOnly);
        r.setField("id", id);
        w.write(r);
      }
    }
    return w.toDeleteFile();
  }

  private DeleteFile writeDV(Table t, DataFile data, long[] positions) throws IOException {
    BaseDVFileWriter w = new BaseDVFileWriter(files(t, FileFormat.PUFFIN), path -> null);
    try (w) {
      for (long p : positions) {
        w.delete(data.location(), p, t.spec(), null);
      }
    }
    return w.result().deleteFiles().get(0);
  }

  /** Commits a staged (stageOnly) append with a wap.id and returns the new snapshot's id. */
  private static long stage(Table t, DataFile file, String wapId) {
    t.newAppend().appendFile(file).set("wap.id", wapId).stageOnly().commit();
    t.refresh();
    for (Snapshot s : t.snapshots()) {
      if (wapId.equals(s.summary().get("wap.id"))) {
        return s.snapshotId();
      }
    }
    throw new IllegalStateException("staged snapshot " + wapId + " not found");
  }

  /** Writes a one-blob Puffin statistics file for the snapshot and registers it. */
  private static void setStatistics(Table t, Snapshot snap) {
    OutputFile out = t.io().newOutputFile(
        t.location() + "/metadata/stats-" + snap.snapshotId() + ".puffin");
    PuffinWriter w = Puffin.write(out).createdBy("icemaint-interop").build();
    try {
      // A standard blob type, so every reader accepts the metadata (PyIceberg rejects unknown
      // types); the payload is not a real sketch, and no judge reads it.
      w.add(new Blob("apache-datasketches-theta-v1", List.of(1), snap.snapshotId(),
          snap.sequenceNumber(),
          ByteBuffer.wrap(("rows-of-" + snap.snapshotId()).getBytes(StandardCharsets.UTF_8)),
          null, Map.of("ndv", "40")));
      w.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StatisticsFile sf = new GenericStatisticsFile(snap.snapshotId(), out.location(), w.fileSize(),
        w.footerSize(), GenericBlobMetadata.from(w.writtenBlobsMetadata()));
    t.updateStatistics().setStatistics(sf).commit();
  }
}

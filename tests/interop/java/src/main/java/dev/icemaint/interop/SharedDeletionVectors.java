/*
 * SharedDeletionVectors: a format-v3 table partitioned by identity(category) whose one Puffin file
 * holds the deletion vectors of two data files in two partitions, as Java's DV writer writes the
 * vectors of one task: one entry per vector, each with its data file's partition, record count and
 * blob offset. Then the data file of one vector is compacted away (`--how compact`: rewritten
 * with its deletes applied, its vector removed) or its vector replaced by a later delete
 * (`--how replace`), so the current snapshot reaches the Puffin file only through the other
 * vector's entry. `--card2 2`: the second vector deletes two rows (another record count).
 *
 * Usage: SharedDeletionVectors --uri JDBC --warehouse URI [--catalog NAME] --table ns.t
 *        --drop first|second [--how compact|replace] [--card2 1|2]
 * Prints one JSON line per vector ({"dv", "ref", "partition", "records", "size"}) in the order
 * written, then {"compacted": CATEGORY, "removed_dv_ref": DATA_FILE}.
 */
package dev.icemaint.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

public final class SharedDeletionVectors {
  private SharedDeletionVectors() {}

  static final Schema SCHEMA = new Schema(
      Types.NestedField.optional(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "category", Types.StringType.get()));
  static int counter = 0;

  public static void main(String[] argv) throws Exception {
    Harness.Args a = Harness.Args.parse(argv, Set.of());
    try (var catalog = Harness.openCatalog(a)) {
      TableIdentifier id = TableIdentifier.parse(a.require("table"));
      if (!catalog.namespaceExists(id.namespace())) catalog.createNamespace(id.namespace());
      PartitionSpec spec = PartitionSpec.builderFor(SCHEMA).identity("category").build();
      Map<String, String> props = new TreeMap<>();
      props.put(TableProperties.FORMAT_VERSION, "3");
      props.put(TableProperties.DELETE_MODE, "merge-on-read");
      Table t = catalog.buildTable(id, SCHEMA).withPartitionSpec(spec).withProperties(props).create();

      DataFile da = writeData(t, "a", 0);
      DataFile db = writeData(t, "b", 100);
      t.newAppend().appendFile(da).appendFile(db).commit();

      // One Puffin file: a vector (one deleted row) per data file, each in its own partition.
      BaseDVFileWriter w = new BaseDVFileWriter(files(t, FileFormat.PUFFIN), path -> null);
      try (w) {
        w.delete(da.location(), 3, t.spec(), da.partition());
        w.delete(db.location(), 3, t.spec(), db.partition());
        if (a.get("card2", "1").equals("2")) w.delete(db.location(), 5, t.spec(), db.partition());
      }
      List<DeleteFile> dvs = w.result().deleteFiles();
      var rd = t.newRowDelta();
      for (DeleteFile d : dvs) rd.addDeletes(d);
      rd.commit();
      for (DeleteFile d : dvs)
        System.out.println("{\"dv\":\"" + d.location() + "\",\"ref\":\"" + d.referencedDataFile()
            + "\",\"partition\":\"" + d.partition().get(0, String.class) + "\",\"records\":"
            + d.recordCount() + ",\"size\":" + d.fileSizeInBytes() + "}");

      // `drop` names the vector (in the order written) whose data file is compacted away, or
      // whose vector a later delete replaces.
      DeleteFile gone = a.require("drop").equals("first") ? dvs.get(0) : dvs.get(1);
      DataFile oldData = gone.referencedDataFile().equals(da.location()) ? da : db;
      String cat = oldData == da ? "a" : "b";
      if (a.get("how", "compact").equals("replace")) {
        // A later delete of that data file's rows: a new vector (the old positions too).
        BaseDVFileWriter w2 = new BaseDVFileWriter(files(t, FileFormat.PUFFIN), path -> null);
        try (w2) {
          for (long pos : new long[] {3, 5, 7}) w2.delete(oldData.location(), pos, t.spec(), oldData.partition());
        }
        DeleteFile repl = w2.result().deleteFiles().get(0);
        t.newRowDelta().addDeletes(repl).removeDeletes(gone)
            .validateFromSnapshot(t.currentSnapshot().snapshotId()).commit();
      } else {
        DataFile rewritten = writeDataWithout(t, cat, oldData == da ? 0 : 100, 3);
        t.newRewrite().deleteFile(oldData).deleteFile(gone).addFile(rewritten)
            .validateFromSnapshot(t.currentSnapshot().snapshotId()).commit();
      }
      System.out.println("{\"compacted\":\"" + cat + "\",\"removed_dv_ref\":\""
          + gone.referencedDataFile() + "\"}");
    }
  }

  static OutputFileFactory files(Table t, FileFormat f) {
    return OutputFileFactory.builderFor(t, 1, ++counter).format(f).build();
  }

  static DataFile writeData(Table t, String cat, long first) throws Exception {
    return writeDataWithout(t, cat, first, -1);
  }

  static DataFile writeDataWithout(Table t, String cat, long first, int skip) throws Exception {
    return writeRows(t, cat, first, 10, skip);
  }

  /** A Parquet data file of `rows` rows (ids from `first`, `skip` left out) in `cat`'s
   * partition (none when the table is unpartitioned). */
  static DataFile writeRows(Table t, String cat, long first, int rows, int skip) throws Exception {
    GenericFileWriterFactory wf = new GenericFileWriterFactory.Builder(t)
        .dataFileFormat(FileFormat.PARQUET).build();
    Record r0 = GenericRecord.create(SCHEMA);
    r0.setField("category", cat);
    PartitionKey key = new PartitionKey(t.spec(), t.schema());
    key.partition(r0);
    boolean partitioned = t.spec().isPartitioned();
    var out = partitioned ? files(t, FileFormat.PARQUET).newOutputFile(t.spec(), key)
        : files(t, FileFormat.PARQUET).newOutputFile();
    DataWriter<Record> w = wf.newDataWriter(out, t.spec(), partitioned ? key : null);
    try (w) {
      for (int i = 0; i < rows; i++) {
        if (i == skip) continue;
        Record r = GenericRecord.create(SCHEMA);
        r.setField("id", first + i);
        r.setField("category", cat);
        w.write(r);
      }
    }
    return w.toDataFile();
  }
}

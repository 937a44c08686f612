/*
 * Shared plumbing for the Java judge's command-line tools: option parsing, opening the SQL catalog
 * that PyIceberg and icemaint share (with HadoopFileIO, or any FileIO named by --prop io-impl=...,
 * e.g. S3FileIO for tables on S3), loading a table by identifier or metadata file, the row
 * fingerprint (which tests/interop/oracle.py mirrors exactly), and minimal JSON output.
 */
package dev.icemaint.interop;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;

final class Harness {
  private Harness() {}

  /** Options as "--name value" pairs (flags without a value map to "true"); the rest are positional. */
  static final class Args {
    final Map<String, List<String>> options = new HashMap<>();
    final List<String> positional = new ArrayList<>();

    static Args parse(String[] argv, Collection<String> flags) {
      Args a = new Args();
      for (int i = 0; i < argv.length; i++) {
        String s = argv[i];
        if (s.startsWith("--")) {
          String name = s.substring(2);
          String value = flags.contains(name) ? "true" : argv[++i];
          a.options.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
        } else {
          a.positional.add(s);
        }
      }
      return a;
    }

    String get(String name, String dflt) {
      List<String> v = options.get(name);
      return v == null ? dflt : v.get(v.size() - 1);
    }

    String require(String name) {
      String v = get(name, null);
      if (v == null) {
        throw new IllegalArgumentException("missing --" + name);
      }
      return v;
    }

    List<String> all(String name) {
      return options.getOrDefault(name, List.of());
    }
  }

  /**
   * Opens the JDBC catalog named by --catalog (default "icm"; PyIceberg's SqlCatalog uses the same
   * tables and the same catalog_name column) at --uri (a jdbc: URL) with --warehouse.
   * --jdbc-user/--jdbc-password are passed on for PostgreSQL.
   */
  static JdbcCatalog openCatalog(Args a) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, a.require("uri"));
    props.put(CatalogProperties.WAREHOUSE_LOCATION, a.require("warehouse"));
    props.put(CatalogProperties.FILE_IO_IMPL, HadoopFileIO.class.getName());
    String user = a.get("jdbc-user", null);
    if (user != null) {
      props.put(JdbcCatalog.PROPERTY_PREFIX + "user", user);
      props.put(JdbcCatalog.PROPERTY_PREFIX + "password", a.get("jdbc-password", ""));
    }
    // --prop key=value (repeatable) sets any catalog property last, e.g. the S3 tests'
    // io-impl=org.apache.iceberg.aws.s3.S3FileIO with s3.endpoint, s3.path-style-access, keys.
    for (String kv : a.all("prop")) {
      int eq = kv.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--prop wants key=value, not " + kv);
      }
      props.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize(a.get("catalog", "icm"), props);
    catalogProperties = Map.copyOf(props);
    return catalog;
  }

  /** The properties of the catalog openCatalog opened last (each tool opens one). */
  private static Map<String, String> catalogProperties = Map.of();

  /**
   * A table named "ns.t" in the catalog, or a metadata JSON file opened read-only with the
   * catalog's FileIO (so an s3:// metadata file is read through S3FileIO when --prop says so).
   */
  static Table loadTable(Catalog catalog, String name) {
    if (name.endsWith(".metadata.json")) {
      String impl = catalogProperties.getOrDefault(CatalogProperties.FILE_IO_IMPL,
          HadoopFileIO.class.getName());
      FileIO io = CatalogUtil.loadFileIO(impl, catalogProperties, new Configuration());
      return new BaseTable(new StaticTableOperations(name, io), name);
    }
    return catalog.loadTable(TableIdentifier.parse(name));
  }

  /**
   * Canonical text of one value. Types are tagged so that, e.g., the string "1" and the number 1
   * differ. Only the types the shapes use are accepted: an unknown type is an error rather than a
   * silently different encoding from the Python side.
   */
  static String canonical(Object v) {
    if (v == null) {
      return "n";
    } else if (v instanceof Boolean) {
      return "b:" + v;
    } else if (v instanceof Integer || v instanceof Long) {
      return "i:" + v;
    } else if (v instanceof CharSequence) {
      return "s:" + v;
    } else if (v instanceof LocalDate) {
      return "d:" + v;
    }
    throw new IllegalArgumentException("fingerprint: unsupported value type " + v.getClass());
  }

  /**
   * Hash of one row: "fieldId=value" for every top-level field of the scanned schema (columnIds), in field-id order, joined by
   * U+001F, SHA-256, first 8 bytes big-endian. Rows are summed (mod 2^64) so order does not matter.
   */
  static long rowHash(Record r, Set<Integer> columnIds) {
    List<Types.NestedField> fields = new ArrayList<>(r.struct().fields());
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < fields.size(); i++) {
      // Readers that apply deletes add metadata columns such as _pos to the record: not data.
      if (columnIds.contains(fields.get(i).fieldId())) {
        order.add(i);
      }
    }
    order.sort((x, y) -> Integer.compare(fields.get(x).fieldId(), fields.get(y).fieldId()));
    StringBuilder sb = new StringBuilder();
    for (int i : order) {
      if (sb.length() > 0) {
        sb.append('\u001f');
      }
      sb.append(fields.get(i).fieldId()).append('=').append(canonical(r.get(i)));
    }
    byte[] d = sha256().digest(sb.toString().getBytes(StandardCharsets.UTF_8));
    long h = 0;
    for (int i = 0; i < 8; i++) {
      h = (h << 8) | (d[i] & 0xffL);
    }
    return h;
  }

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String hex64(long v) {
    return String.format("%016x", v);
  }

  static String json(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }

  static String jsonStrings(Collection<String> items) {
    List<String> quoted = new ArrayList<>();
    for (String s : items) {
      quoted.add(json(s));
    }
    return "[" + String.join(",", quoted) + "]";
  }

  static String jsonLongs(Collection<Long> items) {
    List<String> out = new ArrayList<>();
    for (Long l : items) {
      out.add(Long.toString(l));
    }
    return "[" + String.join(",", out) + "]";
  }
}

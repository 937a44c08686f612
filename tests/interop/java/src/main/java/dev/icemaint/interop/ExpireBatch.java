/*
 * ExpireBatch: runs ExpireDiff once per line of a jobs file, all in one JVM, so a test that
 * compares icemaint with Java on every table pays for JVM start-up and Iceberg class loading
 * once instead of once per table.
 *
 * Usage: ExpireBatch JOBS_FILE
 * Each line of JOBS_FILE holds one ExpireDiff command line, its arguments separated by tabs.
 * Output: ExpireDiff's JSON line for each job, in order; a job that fails prints
 *   {"table": NAME, "error": "ExceptionClass: message"} instead and the next job still runs.
 */
package dev.icemaint.interop;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public final class ExpireBatch {
  private ExpireBatch() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length != 1) {
      throw new IllegalArgumentException("usage: ExpireBatch JOBS_FILE");
    }
    List<String> lines = Files.readAllLines(Path.of(argv[0]), StandardCharsets.UTF_8);
    for (String line : lines) {
      if (line.isBlank()) {
        continue;
      }
      String[] args = line.split("\t");
      try {
        ExpireDiff.main(args);
      } catch (Exception e) {
        // Which table failed is the useful part; ExpireDiff takes it from --table.
        String table = Harness.Args.parse(args, java.util.Set.of("clean-expired-metadata"))
            .get("table", "?");
        System.out.println("{\"table\":" + Harness.json(table) + ",\"error\":"
            + Harness.json(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}");
      }
      System.out.flush();
    }
  }
}

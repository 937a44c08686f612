/*
 * Test tooling for icemaint (not product code): the Apache Iceberg REST catalog fixture, served on
 * 127.0.0.1 only.
 *
 * Iceberg's own launcher, RESTCatalogServer, binds every interface (Jetty's Server(port)) and has
 * no host option, while the project's rule is that test servers listen on loopback only. So this
 * class wires the same pieces the same way -- a catalog built from CATALOG_* environment variables
 * (RCKUtils.environmentCatalogConfig), RESTServerCatalogAdapter over it (which vends the catalog's
 * s3.* credentials in load-table's `config` when include-credentials is true), and
 * RESTCatalogServlet -- behind one Jetty connector bound to 127.0.0.1. It lives in Iceberg's
 * package because the adapter and its CatalogContext are package-private there.
 *
 * Usage: java -cp CP org.apache.iceberg.rest.LoopbackRestServer READY_FILE
 *   Listens on CATALOG_REST_PORT (default 0: a free port); once serving, writes
 *   {"uri": "http://127.0.0.1:PORT", "warehouse": "..."} to READY_FILE (atomically) and runs until
 *   killed. Defaults as the fixture's: JdbcCatalog, jdbc.schema-version V1, catalog rest_backend.
 */
package org.apache.iceberg.rest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;

import org.apache.iceberg.util.PropertyUtil;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public final class LoopbackRestServer {
  private static final String LOOPBACK = "127.0.0.1";

  private LoopbackRestServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: LoopbackRestServer READY_FILE");
      System.exit(2);
    }
    Path ready = Path.of(args[0]);

    Map<String, String> props = new HashMap<>(RCKUtils.environmentCatalogConfig());
    props.putIfAbsent(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    props.putIfAbsent(CatalogProperties.URI, "jdbc:sqlite::memory:");
    props.putIfAbsent("jdbc.schema-version", "V1");
    String warehouse = props.get(CatalogProperties.WAREHOUSE_LOCATION);
    if (warehouse == null) {
      // The fixture would make a temp folder; a test must know where its files are.
      System.err.println("LoopbackRestServer: CATALOG_WAREHOUSE is required");
      System.exit(2);
    }
    String name =
        PropertyUtil.propertyAsString(
            props, RESTCatalogServer.CATALOG_NAME, RESTCatalogServer.CATALOG_NAME_DEFAULT);
    int port = PropertyUtil.propertyAsInt(props, RESTCatalogServer.REST_PORT, 0);

    Catalog catalog = CatalogUtil.buildIcebergCatalog(name, props, new Configuration());
    RESTCatalogAdapter adapter =
        new RESTServerCatalogAdapter(new RESTCatalogServer.CatalogContext(catalog, props));

    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(LOOPBACK);
    connector.setPort(port);
    server.addConnector(connector);
    server.setHandler(context);
    server.setStopAtShutdown(true);
    server.start();

    String info =
        String.format(
            "{\"uri\": \"http://%s:%d\", \"warehouse\": \"%s\"}%n",
            LOOPBACK, connector.getLocalPort(), warehouse.replace("\\", "\\\\").replace("\"", "\\\""));
    Path tmp = ready.resolveSibling(ready.getFileName() + ".tmp");
    Files.writeString(tmp, info, StandardCharsets.UTF_8);
    Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    server.join();
  }
}

"""A local warehouse behind a SQL catalog, seen the same way by PyIceberg, Java and icemaint.

The catalog database is SQLite by default (a file next to the warehouse directory) or PostgreSQL
when a DSN is given (tests read it from ICM_PG_DSN, e.g. postgresql://user:pw@127.0.0.1:5432/db).
PyIceberg's SqlCatalog and Java's JdbcCatalog share the same two tables (iceberg_tables and
iceberg_namespace_properties) and the same catalog name, so a table written by one is loaded by
the other. PyIceberg creates those tables first (Warehouse.create), so Java finds the same layout.
"""

from __future__ import annotations

import shutil
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

CATALOG_NAME = "icm"


@dataclass(frozen=True)
class Warehouse:
    root: Path  # local directory holding the table folders
    pg_dsn: str | None = None  # PostgreSQL catalog instead of SQLite when set
    # The catalog_name column value; a unique one keeps runs apart in a shared PostgreSQL database.
    name: str = CATALOG_NAME

    @property
    def warehouse_uri(self) -> str:
        return self.root.resolve().as_uri()  # file:///abs/path, as Spark and PyIceberg write it

    @property
    def sqlite_path(self) -> Path:
        return self.root.parent / f"{self.root.name}-catalog.db"

    @property
    def sqlalchemy_uri(self) -> str:
        if self.pg_dsn:
            parts = urllib.parse.urlsplit(self.pg_dsn)
            return urllib.parse.urlunsplit(parts._replace(scheme="postgresql+psycopg2"))
        return f"sqlite:///{self.sqlite_path}"

    def catalog(self) -> SqlCatalog:
        return SqlCatalog(self.name, uri=self.sqlalchemy_uri, warehouse=self.warehouse_uri)

    def create(self, namespaces: tuple[str, ...] = ("py", "java")) -> SqlCatalog:
        """Creates the warehouse folder, the catalog tables and the namespaces (idempotent)."""
        self.root.mkdir(parents=True, exist_ok=True)
        cat = self.catalog()
        for ns in namespaces:
            cat.create_namespace_if_not_exists(ns)
        return cat

    def icemaint_args(self) -> list[str]:
        """Global options that make icemaint resolve ns.table names in this catalog."""
        uri = self.pg_dsn or f"sqlite:///{self.sqlite_path}"
        return ["--catalog", self.name, "--uri", uri, "--warehouse", self.warehouse_uri]

    def java_args(self) -> list[str]:
        """Options that make the Java tools open this catalog."""
        args = ["--catalog", self.name, "--warehouse", self.warehouse_uri]
        if not self.pg_dsn:
            return args + ["--uri", f"jdbc:sqlite:{self.sqlite_path}"]
        p = urllib.parse.urlsplit(self.pg_dsn)
        jdbc = f"jdbc:postgresql://{p.hostname}:{p.port or 5432}{p.path}"
        args += ["--uri", jdbc]
        if p.username:
            args += ["--jdbc-user", urllib.parse.unquote(p.username),
                     "--jdbc-password", urllib.parse.unquote(p.password or "")]
        return args

    def save(self, dest: Path) -> None:
        """Copies the warehouse folder and the SQLite catalog to dest (file times kept).

        Table metadata names absolute paths, so a copy elsewhere is not a second table; instead,
        a differential test saves the state, runs one engine, then restore()s the same state at
        the same place and runs the other."""
        if self.pg_dsn:
            raise NotImplementedError("save/restore covers the SQLite catalog only")
        dest.mkdir(parents=True)
        shutil.copytree(self.root, dest / "tree")
        shutil.copy2(self.sqlite_path, dest / "catalog.db")

    def restore(self, src: Path) -> None:
        """Puts back exactly what save() copied, dropping anything written since."""
        shutil.rmtree(self.root)
        shutil.copytree(src / "tree", self.root)
        shutil.copy2(src / "catalog.db", self.sqlite_path)

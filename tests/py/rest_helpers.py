"""Shared helpers and fixtures of the REST catalog tests (test_rest_*.py): the Apache Iceberg REST
fixture, tables written through it by PyIceberg's REST client, the CLI configured for it, exact
file sets, and the judges (PyIceberg, DuckDB and Java each read every retained snapshot).

The fixtures are started by scripts/start-rest.sh (.ci/run and scripts/test.sh run it, after
scripts/start-s3.sh) and named by the environment:
  ICM_TEST_REST_{URI,WAREHOUSE,PROXY_URI,PROXY_CONTROL}      JdbcCatalog (SQLite), local files
  ICM_TEST_REST_S3_{URI,WAREHOUSE,PROXY_URI,PROXY_CONTROL}   the same over moto (ICM_TEST_S3_*),
                                                             vending s3.* credentials in
                                                             load-table's config
  ICM_TEST_REST_S3_{ACCESS_KEY,SECRET_KEY,SESSION_TOKEN}     what it vends
A test that needs a fixture that is not configured FAILS when CI is set, and is skipped otherwise.

Neither PyIceberg nor icemaint is given S3 keys for the S3 fixture: the only credentials they have
are the vended ones, so a table read or written there proves the vended-credential path.

Fixtures: rest_local, rest_s3 (a RestServer), rest_wh (a RestWarehouse on each of the two, a fresh
namespace per test, dropped and its files removed afterwards), vend_wh (the S3 one with the
controls of its REST and S3 fault proxies, for vended credentials that expire).
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import s3_e2e
import s3_helpers as h


# ---- servers ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RestServer:
    name: str  # "local" or "s3"
    uri: str  # http://127.0.0.1:PORT of the fixture itself
    warehouse: str  # file:///... or s3://bucket/prefix
    proxy_uri: str | None  # the fault proxy in front of it
    proxy_control: str | None
    s3: h.S3Server | None  # the S3 server of the warehouse (moto), for the "s3" fixture
    vended: dict | None  # the s3.* credentials the "s3" fixture vends


def need_rest(name: str) -> RestServer:
    prefix = {"local": "ICM_TEST_REST_", "s3": "ICM_TEST_REST_S3_"}[name]
    e = os.environ
    if not e.get(prefix + "URI") or not e.get(prefix + "WAREHOUSE"):
        h.missing(f"REST catalog fixture '{name}' not configured ({prefix}URI unset; "
                  f"scripts/start-rest.sh starts it)")
    s3 = vended = None
    if name == "s3":
        s3 = h.need_server("moto")
        vended = {"s3.access-key-id": e[prefix + "ACCESS_KEY"],
                  "s3.secret-access-key": e[prefix + "SECRET_KEY"],
                  "s3.session-token": e[prefix + "SESSION_TOKEN"]}
    return RestServer(name=name, uri=e[prefix + "URI"].rstrip("/"),
                      warehouse=e[prefix + "WAREHOUSE"].rstrip("/"),
                      proxy_uri=e.get(prefix + "PROXY_URI"),
                      proxy_control=e.get(prefix + "PROXY_CONTROL"), s3=s3, vended=vended)


@pytest.fixture
def rest_local() -> RestServer:
    return need_rest("local")


@pytest.fixture
def rest_s3() -> RestServer:
    return need_rest("s3")


def proxy_of(server: RestServer) -> h.ProxyControl:
    """The shared fault proxy in front of server, its rules and counters cleared."""
    if not server.proxy_uri or not server.proxy_control:
        h.missing(f"no fault proxy configured for the REST fixture '{server.name}'")
    ctl = h.ProxyControl(server.proxy_control)
    ctl.clear()
    return ctl


def http_json(method: str, url: str, body=None, headers=None, timeout: float = 30):
    """(status, parsed JSON or raw text) of one request; HTTP errors are returned, not raised."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def table_url(base: str, namespace: str, table: str) -> str:
    """The load/commit URL of a table (the fixture has no prefix; one-level namespace)."""
    q = urllib.parse.quote
    return f"{base}/v1/namespaces/{q(namespace, safe='')}/tables/{q(table, safe='')}"


# ---- a namespace of tables behind a REST fixture -------------------------------------------------

class RestWarehouse:
    """A fresh namespace in one REST fixture, written through PyIceberg's REST client.

    The same interface as s3_helpers.S3Warehouse where the judges need it (catalog(), name), so
    s3_helpers.write_history() and judge_pyiceberg() work on it unchanged."""

    def __init__(self, server: RestServer, tmp_path: Path, name: str = "rest"):
        self.server = server
        self.tmp = Path(tmp_path)
        self.name = name
        self.namespace = f"icm_{uuid.uuid4().hex[:10]}"
        self._catalogs = {}

    # -- clients --

    def s3_properties(self) -> dict[str, str]:
        """Where the S3 server is, and nothing secret: the keys come from the catalog."""
        if self.server.s3 is None:
            return {}
        return {"s3.endpoint": self.server.s3.endpoint, "s3.region": self.server.s3.region,
                "client.region": self.server.s3.region, "s3.path-style-access": "true"}

    def catalog(self, via_proxy: bool = False):
        """PyIceberg's RestCatalog on the fixture (or through its fault proxy)."""
        from pyiceberg.catalog.rest import RestCatalog
        uri = self.server.proxy_uri if via_proxy else self.server.uri
        if uri not in self._catalogs:
            self._catalogs[uri] = RestCatalog(self.name, uri=uri, **self.s3_properties())
        return self._catalogs[uri]

    def ident(self, table: str = "t") -> str:
        return f"{self.namespace}.{table}"

    def env(self, via_proxy: bool = False, **extra: str) -> dict[str, str]:
        """The catalog entry for icemaint by PyIceberg's variables alone: type rest, uri, the S3
        endpoint and region (no keys), as the default catalog; `extra` adds properties
        (PyIceberg's spelling, e.g. token="..." or **{"header.X-Test": "1"})."""
        props = {"type": "rest",
                 "uri": self.server.proxy_uri if via_proxy else self.server.uri,
                 **self.s3_properties(), **extra}
        cat = f"PYICEBERG_CATALOG__{self.name.upper()}__"
        out = {cat + k.replace(".", "__").replace("-", "_").upper(): v for k, v in props.items()}
        out["PYICEBERG_DEFAULT_CATALOG"] = self.name
        return out

    def cli(self, *args: str, via_proxy: bool = False, env: dict | None = None):
        """icemaint with this catalog as its only configuration (s3_e2e.icm drops inherited
        AWS_* and PYICEBERG_* variables and points HOME and the AWS files at nothing)."""
        return s3_e2e.icm(*args, env={**self.env(via_proxy), **(env or {})}, cwd=self.tmp)

    # -- files --

    def table(self, table: str = "t"):
        return self.catalog().load_table(self.ident(table))

    def location(self, table: str = "t") -> str:
        return self.table(table).metadata.location

    def files(self, table: str = "t") -> set[str]:
        """Every file below the table's location, as paths relative to it (exact, complete)."""
        return files_below(self, self.location(table))

    def cleanup(self) -> None:
        """Drop every table first, then remove their files: a table sharing another's folder
        (t_old beside t) cannot be loaded once that folder is gone, and a table left in the
        fixture that cannot be loaded makes every later sweep refuse and every expiry hold."""
        cat = self.catalog()
        try:
            locations = []
            for ident in cat.list_tables(self.namespace):
                try:
                    locations.append(cat.load_table(ident).metadata.location)
                except Exception:  # noqa: BLE001 - its files already gone: dropped all the same
                    pass
                cat.drop_table(ident)
            for location in locations:
                remove_below(self, location)
            cat.drop_namespace(self.namespace)
        except Exception:  # noqa: BLE001 - cleanup must not mask the test's own verdict
            pass


def local_path(location: str) -> str:
    """A file:/, file:/// or plain location as a local path."""
    if location.startswith("file:"):
        return "/" + location[len("file:"):].lstrip("/")
    return location


def files_below(wh: RestWarehouse, location: str) -> set[str]:
    location = location.rstrip("/")
    if location.startswith(("s3://", "s3a://", "s3n://")):
        server = wh.server.s3
        key = s3_e2e.key_of(location, server.bucket) + "/"
        return {k[len(key):] for k in h.list_keys(server, key)}
    root = local_path(location)
    out = set()
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def remove_below(wh: RestWarehouse, location: str) -> None:
    if location.startswith(("s3://", "s3a://", "s3n://")):
        server = wh.server.s3
        h.delete_prefix(server, s3_e2e.key_of(location.rstrip("/"), server.bucket) + "/")
    else:
        shutil.rmtree(local_path(location), ignore_errors=True)


@pytest.fixture(params=["local", "s3"])
def rest_wh(request, tmp_path):
    """A RestWarehouse on each fixture in turn (local files, then S3 with vended credentials)."""
    wh = RestWarehouse(need_rest(request.param), tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    yield wh
    wh.cleanup()


@pytest.fixture
def vend_wh(tmp_path):
    """(a RestWarehouse on the REST+S3 fixture, its REST proxy's control, the S3 proxy's control)
    for the vended-credential tests: both proxies' rules are cleared before and after."""
    server = need_rest("s3")
    if not server.s3.proxy_endpoint or not server.s3.proxy_control:
        h.missing("no S3 fault proxy in front of moto (scripts/start-s3.sh starts one)")
    rest = proxy_of(server)
    s3 = h.ProxyControl(server.s3.proxy_control)
    s3.clear()
    wh = RestWarehouse(server, tmp_path)
    wh.catalog().create_namespace(wh.namespace)
    yield wh, rest, s3
    rest.clear()
    s3.clear()
    wh.cleanup()


# ---- tables -----------------------------------------------------------------------------------

def write_history_with_refs(wh: RestWarehouse, table: str = "t") -> dict[int, list[int]]:
    """s3_helpers.write_history() through REST (3 appends, a delete, an overwrite), then a tag
    `v1` on the first snapshot and a branch `audit` from the second with one append of its own.
    Returns {snapshot id: sorted ids visible in it} from what was written."""
    ident = wh.ident(table)
    expected = h.write_history(wh, ident)
    t = wh.catalog().load_table(ident)
    snaps = sorted(t.metadata.snapshots, key=lambda s: s.sequence_number)
    first, second = snaps[0], snaps[1]
    with t.manage_snapshots() as ms:
        ms.create_tag(first.snapshot_id, "v1").create_branch(second.snapshot_id, "audit")
    t = wh.catalog().load_table(ident)
    t.append(h._rows([500, 501]), branch="audit")
    t = wh.catalog().load_table(ident)
    branch_head = t.metadata.refs["audit"].snapshot_id
    assert branch_head not in expected
    expected[branch_head] = sorted(expected[second.snapshot_id] + [500, 501])
    return expected


def snapshot_ids(wh: RestWarehouse, table: str = "t") -> set[int]:
    return {s.snapshot_id for s in wh.table(table).metadata.snapshots}


def needed_files(wh: RestWarehouse, table: str = "t", snapshot_ids=None) -> set[str]:
    """The files the table's snapshots (or those named) need, relative to its location."""
    t = wh.table(table)
    return {relative_to(t.metadata.location, p) for p in s3_e2e.reachable(t, snapshot_ids)}


# ---- judges: each reads every retained snapshot -------------------------------------------------

def judge_duckdb(wh: RestWarehouse, ident: str) -> dict[int, list[int]]:
    """{snapshot id: sorted ids} as DuckDB's iceberg extension reads every snapshot (from the
    metadata file the catalog points at; on S3 with the server's keys, through httpfs)."""
    import duckdb
    table = wh.catalog().load_table(ident)
    if wh.server.s3 is not None:
        con = h.duckdb_s3(wh.server.s3)
        location = table.metadata_location
    else:
        con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False})
        for name in ("avro", "iceberg"):
            h._load_duckdb_extension(con, name)
        location = local_path(table.metadata_location)
    out = {}
    for s in table.metadata.snapshots:
        rows = con.execute("SELECT id FROM iceberg_scan(?, snapshot_from_id => ?)",
                           [location, s.snapshot_id]).fetchall()
        out[s.snapshot_id] = sorted(r[0] for r in rows)
    con.close()
    return out


def judge_java(wh: RestWarehouse, ident: str) -> dict[int, list[int]]:
    """{snapshot id: Fingerprint} as Java Iceberg (HadoopFileIO, or S3FileIO with the vended
    keys) reads every snapshot of the metadata file the catalog points at."""
    import javajudge
    from oracle import Fingerprint
    metadata = wh.catalog().load_table(ident).metadata_location
    args = ["--catalog", "judge", "--uri", "jdbc:sqlite::memory:",
            "--warehouse", wh.server.warehouse]
    if wh.server.s3 is not None:
        props = {"io-impl": "org.apache.iceberg.aws.s3.S3FileIO", **wh.s3_properties(),
                 **wh.server.vended}
        for k, v in props.items():
            args += ["--prop", f"{k}={v}"]
    docs = javajudge.run("Fingerprint", [*args, metadata])
    assert len(docs) == 1, docs
    if "error" in docs[0]:
        raise AssertionError(f"Java judge could not read {metadata}: {docs[0]['error']}")
    return {s["snapshot_id"]: Fingerprint(s["rows"], s["hash"]) for s in docs[0]["snapshots"]}


def assert_judges_read(wh: RestWarehouse, table: str, expected: dict[int, list[int]]) -> None:
    """PyIceberg, DuckDB and Java each read every retained snapshot of the table, and each
    reads exactly the rows `expected` (write_history_with_refs) says it holds."""
    ident = wh.ident(table)
    retained = snapshot_ids(wh, table)
    want = {sid: ids for sid, ids in expected.items() if sid in retained}
    assert set(want) == retained, f"snapshots nobody wrote: {retained - set(expected)}"
    assert h.judge_pyiceberg(wh, ident) == want, "PyIceberg"
    assert judge_duckdb(wh, ident) == want, "DuckDB"
    assert judge_java(wh, ident) == h.expected_fingerprints(want), "Java"


def listening_addresses(port: int) -> list[str]:
    """The local addresses of every listening TCP socket on `port` (IPv4 and IPv6), from
    /proc/net/tcp{,6}, as text (127.0.0.1, ::ffff:127.0.0.1, 0.0.0.0, ::)."""
    import ipaddress
    out = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                addr, port_hex = fields[1].split(":")
                if fields[3] != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                    continue
                raw = bytes.fromhex(addr)
                # The kernel prints each 32-bit word in host (little-endian) order.
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                out.append(str(ipaddress.ip_address(raw)) if width == 8 else
                           str(ipaddress.IPv6Address(raw)))
    return out


def is_loopback(address: str) -> bool:
    import ipaddress
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback



# ---- expected outcomes --------------------------------------------------------------------------

def relative(wh: RestWarehouse, table: str, location: str) -> str:
    return relative_to(wh.location(table), location)


def relative_to(table_location: str, location: str) -> str:
    """`location` relative to the table location. On local files the fixture spells the same
    folder two ways (the table location `file:///...` from the warehouse, the metadata files
    `file:/...` as Hadoop's Path writes them), so both are compared as local paths."""
    if not table_location.startswith(("s3://", "s3a://", "s3n://")):
        table_location, location = local_path(table_location), local_path(location)
    prefix = table_location.rstrip("/") + "/"
    assert location.startswith(prefix), f"{location} is outside {prefix}"
    return location[len(prefix):]


def version_files(wh: RestWarehouse, table: str = "t") -> set[str]:
    """The files of the table's current metadata version, relative to its location: the
    metadata JSON the catalog wrote and, on local files, the Hadoop checksum file beside it
    (the fixture writes through HadoopFileIO's checksummed local file system)."""
    rel = relative(wh, table, wh.table(table).metadata_location)
    if wh.server.s3 is not None:
        return {rel}
    head, _, name = rel.rpartition("/")
    return {rel, f"{head}/.{name}.crc" if head else f".{name}.crc"}


def retained_by_refs(table) -> set[int]:
    """What Iceberg's retention keeps when every snapshot is older than the cutoff and each ref
    keeps 1 snapshot (no ref sets its own retention): each ref's own snapshot."""
    return {ref.snapshot_id for ref in table.metadata.refs.values()}


def write_parquet_into(wh: RestWarehouse, table: str, name: str, ids) -> str:
    """A Parquet file (columns id, data, no field ids) below the table's data folder, written
    straight to the store (not through Iceberg); returns its location."""
    import io

    import pyarrow.parquet as pq
    location = wh.location(table).rstrip("/") + "/data/" + name
    buf = io.BytesIO()
    pq.write_table(h._rows(ids), buf)
    if wh.server.s3 is not None:
        h.put(wh.server.s3, s3_e2e.key_of(location, wh.server.s3.bucket), buf.getvalue())
    else:
        path = local_path(location)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(buf.getvalue())
    return location


def put_file(wh: RestWarehouse, table: str, rel: str, body: bytes = b"orphan") -> None:
    location = wh.location(table).rstrip("/") + "/" + rel
    if wh.server.s3 is not None:
        h.put(wh.server.s3, s3_e2e.key_of(location, wh.server.s3.bucket), body)
    else:
        path = local_path(location)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)


def remove_file(wh: RestWarehouse, table: str, rel: str) -> None:
    location = wh.location(table).rstrip("/") + "/" + rel
    if wh.server.s3 is not None:
        h.client(wh.server.s3, attempts=4).delete_object(
            Bucket=wh.server.s3.bucket, Key=s3_e2e.key_of(location, wh.server.s3.bucket))
    else:
        os.remove(local_path(location))

#!/usr/bin/env python3
"""Start and stop the S3 test servers on loopback (called by scripts/start-s3.sh).

  s3servers.py start DIR   start every server, create the test buckets, write DIR/env
  s3servers.py stop DIR    stop every process started from DIR (by the pids recorded there)

Servers (each on 127.0.0.1, a free port, data under DIR):
  moto          moto's server mode: wide S3 API coverage, If-None-Match on PUT, but no signature
                check. Env ICM_TEST_S3_*.
  verifying     an S3 implementation that verifies SigV4 (a wrong secret gets 403): the one named
                in build/s3/verifying (written by scripts/setup-s3.sh). Env ICM_TEST_S3V_*.
  fault proxies one tests/tools/faultproxy.py in front of each: ICM_TEST_S3_PROXY_ENDPOINT /
                ICM_TEST_S3_PROXY_CONTROL (moto) and ICM_TEST_S3V_PROXY_* (verifying server).
DIR/env holds `export NAME=value` lines for a shell to source. Credentials are random per start,
so no test can pass by knowing them in advance.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REGION = "us-east-1"
BUCKET = "icm-test"
STARTUP_TIMEOUT_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(directory, name, argv, env=None):
    """Start a process in its own session (so stop() can end its whole group); record its pid."""
    log = open(os.path.join(directory, f"{name}.log"), "ab")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True, cwd=directory)
    with open(os.path.join(directory, f"{name}.pid"), "w") as f:
        f.write(f"{proc.pid}\n")
    return proc


def wait_http(url, proc, name, directory):
    """Wait until url answers any HTTP status (403 from a verifying server is fine)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    with open(os.path.join(directory, f"{name}.log"), errors="replace") as f:
        tail = f.read()[-3000:]
    raise SystemExit(f"s3servers: {name} did not start at {url} "
                     f"(exit status {proc.poll()}); its log ends:\n{tail}")


def s3_client(endpoint, access_key, secret_key):
    import boto3
    from botocore.config import Config
    return boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key,
        aws_secret_access_key=secret_key, region_name=REGION,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3},
                      request_checksum_calculation="when_required",
                      response_checksum_validation="when_required"))


def start_moto(directory):
    port = free_port()
    moto = os.path.join(os.path.dirname(sys.executable), "moto_server")
    proc = spawn(directory, "moto", [moto, "-H", "127.0.0.1", "-p", str(port)])
    endpoint = f"http://127.0.0.1:{port}"
    wait_http(endpoint + "/moto-api/", proc, "moto", directory)
    return {"ENDPOINT": endpoint, "ACCESS_KEY": "AKIA" + secrets.token_hex(8).upper(),
            "SECRET_KEY": secrets.token_urlsafe(30), "BUCKET": BUCKET, "REGION": REGION,
            "SERVER": "moto"}


def start_versitygw(directory, binary):
    port = free_port()
    access_key = "AKIA" + secrets.token_hex(8).upper()
    secret_key = secrets.token_urlsafe(30)
    data = os.path.join(directory, "versitygw-data")
    os.makedirs(data, exist_ok=True)
    env = dict(os.environ, ROOT_ACCESS_KEY=access_key, ROOT_SECRET_KEY=secret_key)
    proc = spawn(directory, "verifying",
                 [binary, "--quiet", "--port", f"127.0.0.1:{port}", "--region", REGION,
                  "posix", data],
                 env=env)
    endpoint = f"http://127.0.0.1:{port}"
    wait_http(endpoint + "/", proc, "verifying", directory)
    return {"ENDPOINT": endpoint, "ACCESS_KEY": access_key, "SECRET_KEY": secret_key,
            "BUCKET": BUCKET, "REGION": REGION, "SERVER": "versitygw-1.8.0"}


def start_proxy(directory, name, upstream):
    ready = os.path.join(directory, f"{name}.json")
    proc = spawn(directory, name, [sys.executable, os.path.join(HERE, "faultproxy.py"),
                                   "--upstream", upstream, "--ready-file", ready])
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not os.path.exists(ready):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"s3servers: fault proxy {name} did not start (see {name}.log)")
        time.sleep(0.05)
    with open(ready) as f:
        return json.load(f)


def verifying_server():
    """(kind, path) of the verifying server that scripts/setup-s3.sh installed."""
    marker = os.path.join(ROOT, "build", "s3", "verifying")
    if not os.path.exists(marker):
        raise SystemExit("s3servers: no verifying S3 server installed (run scripts/setup-s3.sh)")
    with open(marker) as f:
        kind, path = f.read().split(None, 1)
    return kind, path.strip()


def start(directory):
    os.makedirs(directory, exist_ok=True)
    env = {}
    moto = start_moto(directory)
    kind, path = verifying_server()
    if kind == "versitygw":
        verifying = start_versitygw(directory, path)
    else:
        raise SystemExit(f"s3servers: unknown verifying server kind {kind!r}")
    for prefix, server in (("ICM_TEST_S3_", moto), ("ICM_TEST_S3V_", verifying)):
        client = s3_client(server["ENDPOINT"], server["ACCESS_KEY"], server["SECRET_KEY"])
        client.create_bucket(Bucket=server["BUCKET"])
        for key, value in server.items():
            env[prefix + key] = value
    moto_proxy = start_proxy(directory, "proxy-moto", moto["ENDPOINT"])
    verifying_proxy = start_proxy(directory, "proxy-verifying", verifying["ENDPOINT"])
    env["ICM_TEST_S3_PROXY_ENDPOINT"] = moto_proxy["endpoint"]
    env["ICM_TEST_S3_PROXY_CONTROL"] = moto_proxy["control"]
    env["ICM_TEST_S3V_PROXY_ENDPOINT"] = verifying_proxy["endpoint"]
    env["ICM_TEST_S3V_PROXY_CONTROL"] = verifying_proxy["control"]
    lines = [f"export {k}={shell_quote(v)}" for k, v in sorted(env.items())]
    with open(os.path.join(directory, "env"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def shell_quote(value):
    return "'" + str(value).replace("'", "'\\''") + "'"


def stop(directory):
    if not os.path.isdir(directory):
        return
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".pid"):
            continue
        path = os.path.join(directory, name)
        with open(path) as f:
            pid = int(f.read().strip())
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.unlink(path)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    directory = os.path.abspath(argv[2])
    if argv[1] == "start":
        try:
            start(directory)
        except BaseException:
            stop(directory)
            raise
    else:
        stop(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

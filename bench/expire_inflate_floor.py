"""bench/expire_inflate_floor.py: the lowest floor for snapshot-expiry planning: read every Avro
file under a table's metadata/ folder (for a `bench_expire gen` table: exactly every manifest
list and every unique manifest, once) and inflate every deflate block, decoding nothing.
Prints files, blocks, bytes read and inflated, and this process's CPU seconds (the per-block
work is zlib's C code; Python only walks the container framing: header, then per block a
count, a size, the data and the 16-byte sync marker).

    python3 bench/expire_inflate_floor.py DIR/t
"""

import os
import sys
import time
import zlib


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Avro long: zig-zag varint."""
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7


def inflate_file(path: str) -> tuple[int, int, int]:
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:4] == b"Obj\x01", path
    pos = 4
    codec = b"null"
    while True:  # header metadata map: blocks of (key, value) pairs
        n, pos = varint(buf, pos)
        if n == 0:
            break
        if n < 0:
            n = -n
            _, pos = varint(buf, pos)
        for _ in range(n):
            klen, pos = varint(buf, pos)
            key = buf[pos:pos + klen]
            pos += klen
            vlen, pos = varint(buf, pos)
            if key == b"avro.codec":
                codec = buf[pos:pos + vlen]
            pos += vlen
    pos += 16  # sync marker
    blocks = out = 0
    while pos < len(buf):
        _, pos = varint(buf, pos)  # object count
        size, pos = varint(buf, pos)
        data = buf[pos:pos + size]
        pos += size + 16
        out += len(zlib.decompress(data, -15)) if codec == b"deflate" else len(data)
        blocks += 1
    return len(buf), blocks, out


def main() -> None:
    meta = os.path.join(sys.argv[1], "metadata")
    c0, w0 = time.process_time(), time.perf_counter()
    files = blocks = read = inflated = 0
    for name in sorted(os.listdir(meta)):
        if name.endswith(".avro"):
            r, b, o = inflate_file(os.path.join(meta, name))
            files, blocks, read, inflated = files + 1, blocks + b, read + r, inflated + o
    print(f"inflate floor: {files} files, {blocks} blocks, {read / 1e6:.1f} MB read, "
          f"{inflated / 1e6:.1f} MB inflated, cpu {time.process_time() - c0:.3f} s, "
          f"wall {time.perf_counter() - w0:.3f} s")


if __name__ == "__main__":
    main()

"""What hostile clients can make the emulator hold: its RSS after each batch, and whether a
normal client is still served. The emulator runs as `python -m emulator` in a child process with a
file-descriptor limit of 1,024 (a common default), so the figures are its own.

Cases: 300 requests with 1 MB paths; 300 with 1 MB `x-ms-activity-id`; 400 pipelined reads of a 1.9 MB
item the client never reads; 1,100 idle connections, then one more client.
Target: RSS back within 50 MB of its start after each batch; the extra client answered 200.
Run: .venv/bin/python benchmarks/bench_transport.py [--root DIR]  (DIR: another checkout to compare)
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from emulator.rest.auth import WELL_KNOWN_KEY as KEY  # noqa: E402
from tests import rawhttp  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(root: Path, port: int) -> subprocess.Popen:
    def limit_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    command = [sys.executable, "-m", "emulator", "--port", str(port), "--monitor-port", "0", "--no-throttling"]
    proc = subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=limit_descriptors
    )
    proc.stdout.readline()  # the banner: it listens
    return proc


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


def send(port: int, data: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        try:
            sock.sendall(data)
            sock.settimeout(10)
            sock.recv(200)
        except OSError:
            pass


def big_paths(port: int) -> None:
    for i in range(300):
        send(port, f"GET /dbs/{i}{'a' * 1_000_000} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode())


def big_activity_ids(port: int) -> None:
    for i in range(300):
        send(port, f"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-ms-activity-id: {i}{'a' * 1_000_000}\r\n\r\n".encode())


def unread_pipelined_reads(port: int) -> None:
    url, path = f"http://127.0.0.1:{port}/", "/dbs/d/colls/c/docs/big"
    container = {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}
    rawhttp.request(url, KEY, "POST", "/dbs", json.dumps({"id": "d"}))
    rawhttp.request(url, KEY, "POST", "/dbs/d/colls", json.dumps(container))
    item = json.dumps({"id": "big", "pk": "p", "pad": "x" * 1_900_000})
    rawhttp.request(url, KEY, "POST", "/dbs/d/colls/c/docs", item, {"x-ms-documentdb-partitionkey": '["p"]'})
    headers = {**rawhttp.signed_headers(KEY, "GET", path), "x-ms-documentdb-partitionkey": '["p"]'}
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(rawhttp.raw_bytes("GET", path, headers) * 400)
    time.sleep(5)  # the server does what it will; RSS is read before the socket closes
    unread_pipelined_reads.sock = sock  # type: ignore[attr-defined]


def idle_connections(port: int) -> str:
    held = [socket.create_connection(("127.0.0.1", port), timeout=2) for _ in range(1100)]
    time.sleep(1)
    try:
        status = rawhttp.request(f"http://127.0.0.1:{port}/", KEY, "GET", "/")[0]
    except OSError as exc:
        status = type(exc).__name__
    for sock in held:
        sock.close()
    return f"another client got {status}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose emulator is measured")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))  # this process holds 1,100 sockets
    port = free_port()
    proc = start(args.root, port)
    try:
        base = rss_mb(proc.pid)
        print(f"{'case':<34} {'RSS MB':>7} {'growth':>7}  target growth <= 50 MB")
        print(f"{'start':<34} {base:>7}")
        for name, case in [
            ("300 x 1 MB paths", big_paths),
            ("300 x 1 MB x-ms-activity-id", big_activity_ids),
            ("400 unread pipelined 1.9 MB reads", unread_pipelined_reads),
        ]:
            case(port)
            now = rss_mb(proc.pid)
            print(f"{name:<34} {now:>7} {now - base:>+7}  {'ok' if now - base <= 50 else 'MISSED'}")
        print(f"{'1,100 idle connections':<34} {rss_mb(proc.pid):>7}          {idle_connections(port)}")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()

"""A minimal synchronized-read workload for the monitor's end-to-end test (not the
testbed: that is a separate face). FAST'08 (``000_315d806dde942a9f.txt`` §2): a client asks
every server for one SRU at once and asks again only when all of them arrived.

    python workload.py serve --addrs A,B,... --port P --duration S
    python workload.py read  --addrs A,B,... --port P --sru BYTES --duration S   # incast
    python workload.py bulk  --addrs A --port P --duration S                     # one long flow

A request is 8 bytes: the number of bytes wanted (0 = stream until the client closes).
Everything stops by itself after --duration.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import struct
import sys
import threading
import time

CHUNK = 65536


def serve_conn(conn: socket.socket, deadline: float) -> None:
    payload = b"\0" * CHUNK
    conn.settimeout(1.0)
    try:
        while time.monotonic() < deadline:
            try:
                req = conn.recv(8, socket.MSG_WAITALL)
            except socket.timeout:
                continue
            if len(req) < 8:
                return
            (want,) = struct.unpack("!Q", req)
            # a send may wait out RTO backoffs of several seconds: that is the phenomenon,
            # not a reason to give up on the client
            conn.settimeout(30.0)
            if want == 0:  # bulk: stream until the client goes away or time is up
                while time.monotonic() < deadline:
                    conn.sendall(payload)
                return
            while want > 0:
                n = min(want, CHUNK)
                conn.sendall(payload[:n])
                want -= n
            conn.settimeout(1.0)
    except OSError:
        return
    finally:
        conn.close()


def serve(addrs: list[str], port: int, duration: float) -> None:
    deadline = time.monotonic() + duration
    sel = selectors.DefaultSelector()
    for a in addrs:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a, port))
        s.listen(64)
        sel.register(s, selectors.EVENT_READ)
    print("ready", flush=True)
    threads = []
    while time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            conn, _ = key.fileobj.accept()
            conn.setblocking(True)
            t = threading.Thread(target=serve_conn, args=(conn, deadline), daemon=True)
            t.start()
            threads.append(t)
    for t in threads:
        t.join(timeout=2)


def connect_all(addrs: list[str], port: int) -> list[socket.socket]:
    socks = []
    for a in addrs:
        s = socket.create_connection((a, port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        socks.append(s)
    return socks


def read_blocks(addrs: list[str], port: int, sru: int, duration: float) -> dict:
    socks = connect_all(addrs, port)
    for s in socks:
        s.setblocking(False)
    sel = selectors.DefaultSelector()
    buf = bytearray(CHUNK)
    blocks, start = 0, time.monotonic()
    deadline = start + duration
    while time.monotonic() < deadline:
        left = {}
        for s in socks:
            s.sendall(struct.pack("!Q", sru))  # 8 bytes always fit the empty send buffer
            left[s.fileno()] = sru
            sel.register(s, selectors.EVENT_READ)
        while left and time.monotonic() < deadline + 5:
            for key, _ in sel.select(timeout=0.5):
                n = key.fileobj.recv_into(buf)
                if n == 0:
                    raise SystemExit("a server closed its connection")
                left[key.fd] -= n
                if left[key.fd] <= 0:
                    del left[key.fd]
                    sel.unregister(key.fileobj)
        if left:
            break
        blocks += 1
    elapsed = time.monotonic() - start
    for s in socks:
        s.close()
    return {"mode": "read", "blocks": blocks, "servers": len(addrs), "sru_bytes": sru,
            "seconds": round(elapsed, 3), "goodput_mbps": round(blocks * sru * len(addrs) * 8 / elapsed / 1e6, 1)}


def bulk(addr: str, port: int, duration: float) -> dict:
    (s,) = connect_all([addr], port)
    s.sendall(struct.pack("!Q", 0))
    s.settimeout(2)
    buf = bytearray(CHUNK)
    got, start = 0, time.monotonic()
    while time.monotonic() - start < duration:
        n = s.recv_into(buf)
        if n == 0:
            break
        got += n
    elapsed = time.monotonic() - start
    s.close()
    return {"mode": "bulk", "bytes": got, "seconds": round(elapsed, 3), "goodput_mbps": round(got * 8 / elapsed / 1e6, 1)}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["serve", "read", "bulk"])
    p.add_argument("--addrs", required=True)
    p.add_argument("--port", type=int, default=5201)
    p.add_argument("--sru", type=int, default=256 * 1024)
    p.add_argument("--duration", type=float, default=5.0)
    a = p.parse_args()
    addrs = a.addrs.split(",")
    if a.mode == "serve":
        serve(addrs, a.port, a.duration)
        return 0
    out = read_blocks(addrs, a.port, a.sru, a.duration) if a.mode == "read" else bulk(addrs[0], a.port, a.duration)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Subscribers of the events endpoint behind user-space TCP proxies that fail in silence.

Each subscriber connects to its own proxy, which connects to the service. After a few seconds
of passing everything, each proxy turns to its mode:
- blackhole: keeps both connections open and reads everything, forwarding nothing; the service
  gets no reset, no PONG and no end, as from a peer behind a link that drops every packet;
- stalled: keeps both connections open and reads nothing, so the service's bytes pile up in
  the kernels' buffers until the window shuts, as before a hung peer (or a dead link);
- slow: forwards what the service sends at a few tens of KB/s, far below what the service
  publishes meanwhile, holding at most a small buffer, so the backlog waits in the kernel
  before the proxy; the subscriber pings (ZMQ_HEARTBEAT_IVL), as docs/protocol.md advises.
The blackholed and stalled subscribers do not ping: a plain pyzmq SUB.

Whether the service still holds a proxy's connection is read from /proc/net/tcp: the service's
end of it (its events port, the proxy's port) is there until the service closes or aborts it.

Environment: STRATA_EVENTS (tcp://127.0.0.1:PORT), WATCH_SECONDS (how long to watch after the
modes begin), MODES (the proxies to run, all three by default), and for a service that runs
CURVE, CURVE_SERVER, CURVE_PUBLIC and CURVE_SECRET (Z85 keys). Prints one JSON object: for
each proxy, after how many milliseconds of its mode the service dropped its connection (null if
it kept it), what its subscriber received before and after, and how many times it connected.
"""

import json
import os
import socket
import sys
import threading
import time

import zmq

EVENTS = os.environ["STRATA_EVENTS"]
WATCH_SECONDS = float(os.environ.get("WATCH_SECONDS", "45"))
MODES = os.environ.get("MODES", "blackhole,stalled,slow").split(",")
CURVE = [os.environ[k].encode() for k in ("CURVE_SERVER", "CURVE_PUBLIC", "CURVE_SECRET") if k in os.environ]
WARMUP_SECONDS = 3.0
SLOW_BYTES_PER_SECOND = 32 * 1024
SLOW_BUFFER_BYTES = 16 * 1024

service_host, service_port = EVENTS.rsplit("/", 1)[-1].rsplit(":", 1)
service_port = int(service_port)


class Proxy:
    def __init__(self, name):
        self.name = name
        self.mode = "pass"
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.upstream_ports = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            self.accepted += 1
            upstream = socket.create_connection((service_host, service_port))
            self.upstream_ports.append(upstream.getsockname()[1])
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()

    def _pump(self, source, target, downstream):
        source.settimeout(0.2)
        while True:
            mode = self.mode
            if mode == "stalled":
                time.sleep(0.1)
                continue
            limit = SLOW_BUFFER_BYTES if mode == "slow" and downstream else 65536
            try:
                data = source.recv(limit)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            if mode == "blackhole":
                continue
            try:
                target.sendall(data)
            except OSError:
                return
            if mode == "slow" and downstream:
                time.sleep(len(data) / SLOW_BYTES_PER_SECOND)


def service_holds(port):
    """Whether the service's end of the connection from the proxy's `port` is established."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state = fields[1], fields[2], fields[3]
            if int(local.rsplit(":", 1)[1], 16) == service_port and int(remote.rsplit(":", 1)[1], 16) == port:
                return state == "01"
    return False


def subscriber(context, proxy, pinging):
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    if CURVE:
        sub.curve_serverkey, sub.curve_publickey, sub.curve_secretkey = CURVE
    if pinging:
        sub.setsockopt(zmq.HEARTBEAT_IVL, 5000)
        sub.setsockopt(zmq.HEARTBEAT_TTL, 30000)
        sub.setsockopt(zmq.HEARTBEAT_TIMEOUT, 30000)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect("tcp://127.0.0.1:%d" % proxy.port)
    return sub


def main():
    context = zmq.Context()
    proxies = {name: Proxy(name) for name in MODES}
    subs = {name: subscriber(context, proxy, pinging=(name == "slow")) for name, proxy in proxies.items()}
    received = {name: 0 for name in subs}
    poller = zmq.Poller()
    for sub in subs.values():
        poller.register(sub, zmq.POLLIN)

    def drain(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for sub, _ in poller.poll(100):
                name = next(n for n, s in subs.items() if s is sub)
                while True:
                    try:
                        sub.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    received[name] += 1

    drain(WARMUP_SECONDS)
    for name, proxy in proxies.items():
        if received[name] == 0 or len(proxy.upstream_ports) != 1 or not service_holds(proxy.upstream_ports[0]):
            print(json.dumps({"error": "%s not connected through its proxy" % name, "received": received}))
            return 1
    before = dict(received)
    start = time.monotonic()
    for name, proxy in proxies.items():
        proxy.mode = name
    dropped = {name: None for name in proxies}
    while time.monotonic() - start < WATCH_SECONDS:
        drain(0.5)
        for name, proxy in proxies.items():
            if dropped[name] is None and not service_holds(proxy.upstream_ports[0]):
                dropped[name] = int((time.monotonic() - start) * 1000)
    result = {
        name: {
            "droppedAfterMilliseconds": dropped[name],
            "receivedBefore": before[name],
            "receivedAfter": received[name] - before[name],
            "connections": proxies[name].accepted,
        }
        for name in proxies
    }
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

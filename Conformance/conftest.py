"""Starts real fleetd processes for the conformance suite and mints tokens the way a provider's
token server would: with google-auth, from the service-account files `fleetd keys add` writes."""
import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import grpc
import pytest
from google.auth import crypt, jwt
from google.protobuf import field_mask_pb2
from google.maps import fleetengine_v1 as fe
from google.maps.fleetengine_v1.services.trip_service.transports import TripServiceGrpcTransport
from google.maps.fleetengine_v1.services.vehicle_service.transports import VehicleServiceGrpcTransport
from google.maps import fleetengine_delivery_v1 as fd
from google.maps.fleetengine_delivery_v1.services.delivery_service.transports import DeliveryServiceGrpcTransport

FLEETD = os.environ.get("FLEETD_BINARY", os.path.join(os.path.dirname(__file__), "..", ".build", "debug", "fleetd"))
PROVIDER = "conformance"
P = f"providers/{PROVIDER}"
MONACO = os.path.join(os.path.dirname(__file__), "..", "data", "monaco.osm.pbf")
# With a PostgreSQL cluster's admin URL here (postgres://user@host:port/postgres), every fleetd of
# the suite keeps its fleet in a database of its own there instead of SQLite.
POSTGRES = os.environ.get("CONFORMANCE_POSTGRES")
# With PostgreSQL: how many fleetd processes serve each test's fleet. Calls go to them in turn,
# as a load balancer without sticky sessions would send them.
INSTANCES = int(os.environ.get("CONFORMANCE_INSTANCES", "1"))


# Every data directory the suite made, removed when the session ends with every test passed (a
# failed run keeps them: their fleetd logs say what happened).
MADE_DIRECTORIES = []


def data_directory(prefix="fleetd-conformance-"):
    """A new temporary data directory for a fleetd of this suite."""
    path = tempfile.mkdtemp(prefix=prefix)
    MADE_DIRECTORIES.append(path)
    return path


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0:
        for path in MADE_DIRECTORIES:
            shutil.rmtree(path, ignore_errors=True)


def free_ports(count):
    """Ports free now, all different: each stays bound until all are found (the system can hand
    out the same free port twice in a row)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class RoundRobin(grpc.Channel):
    """Channels to several fleetd instances behind one: each call goes to the next instance."""

    def __init__(self, channels):
        self.channels = channels
        self.turn = itertools.count()

    def _callable(self, kind, method, *args, **kwargs):
        callables = [getattr(c, kind)(method, *args, **kwargs) for c in self.channels]
        turn = self.turn

        class Next:
            def _next(self):
                return callables[next(turn) % len(callables)]

            def __call__(self, *a, **k):
                return self._next()(*a, **k)

            def with_call(self, *a, **k):
                return self._next().with_call(*a, **k)

            def future(self, *a, **k):
                return self._next().future(*a, **k)

        return Next()

    def unary_unary(self, method, *args, **kwargs):
        return self._callable("unary_unary", method, *args, **kwargs)

    def unary_stream(self, method, *args, **kwargs):
        return self._callable("unary_stream", method, *args, **kwargs)

    def stream_unary(self, method, *args, **kwargs):
        return self._callable("stream_unary", method, *args, **kwargs)

    def stream_stream(self, method, *args, **kwargs):
        return self._callable("stream_stream", method, *args, **kwargs)

    def subscribe(self, callback, try_to_connect=False):
        for c in self.channels:
            c.subscribe(callback, try_to_connect)

    def unsubscribe(self, callback):
        for c in self.channels:
            c.unsubscribe(callback)

    def close(self):
        for c in self.channels:
            c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Instance:
    """One fleetd process."""

    def __init__(self, data_dir, name, arguments):
        self.grpc_port, self.http_port = free_ports(2)
        self.log = open(os.path.join(data_dir, f"fleetd{name}.log"), "ab")
        self.process = subprocess.Popen(
            [FLEETD, "serve", "--data-dir", data_dir, "--grpc-port", str(self.grpc_port),
             "--http-port", str(self.http_port)] + arguments, stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"fleetd exited with {self.process.returncode}; see {self.log.name}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        else:
            raise RuntimeError("fleetd did not start")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.grpc_port}")

    def running(self):
        return self.process.poll() is None

    def kill(self, sig_kill=True):
        if self.running():
            (self.process.kill if sig_kill else self.process.terminate)()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                # A shutdown that hangs: where every thread stood, and what fleetd said last.
                stacks = threads_of(self.process.pid)
                self.process.kill()
                self.process.wait()
                self.log.flush()
                with open(self.log.name, "rb") as f:
                    tail = f.read()[-6000:].decode(errors="replace")
                raise AssertionError(f"fleetd did not exit within 30 s of SIGTERM; its threads:\n{stacks}\n"
                                     f"its log ends:\n{tail}")
        self.channel.close()


def threads_of(pid):
    """Every thread's backtrace of a running process, through gdb or the toolchain's lldb."""
    for command in (["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"],
                    ["lldb", "-p", str(pid), "--batch", "-o", "thread backtrace all -c 30"]):
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=120).stdout[-30000:]
        except (OSError, subprocess.TimeoutExpired) as error:
            last = error
    return f"(no debugger could attach: {last})"


class Fleetd:
    """fleetd on loopback with its own data directory and keys: one process, or with
    CONFORMANCE_INSTANCES=N several sharing one PostgreSQL database, called in turn."""

    def __init__(self, data_dir=None, extra=(), instances=None):
        self.data_dir = data_dir or data_directory()
        self.store = self._store() if POSTGRES else []
        self.extra = list(extra)
        self.keys = {}
        self.process = None
        self.count = instances or (INSTANCES if POSTGRES else 1)
        self.instances = []

    def _store(self):
        """`--store` for this data directory: a new database, kept for a restart on the same directory."""
        remembered = os.path.join(self.data_dir, "store-url")
        if not os.path.exists(remembered):
            name = "conformance_" + os.path.basename(self.data_dir).replace("-", "_").lower()
            subprocess.run(["psql", POSTGRES, "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE DATABASE {name}"],
                           check=True, capture_output=True)
            base, _, query = POSTGRES.partition("?")
            with open(remembered, "w") as f:
                f.write(base.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else ""))
        return ["--store", open(remembered).read()]

    def add_key(self, role, provider=PROVIDER):
        path = os.path.join(self.data_dir, f"{provider}-{role}.json")
        subprocess.run([FLEETD, "keys", "add", "--data-dir", self.data_dir] + self.store +
                       ["--provider", provider, "--role", role, "--out", path], check=True, capture_output=True)
        self.keys[(provider, role)] = path
        return path

    def start(self):
        # One after another: the first builds the data directory's caches, the others find them.
        self.instances = [Instance(self.data_dir, "" if i == 0 else f"-{i}", self.store + self.extra)
                          for i in range(self.count)]
        if self.count > 1:
            # Every instance counts the others (heartbeats every 2 s) before calls are shared out.
            time.sleep(2.5)
        first = self.instances[0]
        self.process, self.grpc_port, self.http_port = first.process, first.grpc_port, first.http_port
        self.channel = first.channel if self.count == 1 else RoundRobin([i.channel for i in self.instances])
        self.trips = fe.TripServiceClient(transport=TripServiceGrpcTransport(channel=self.channel))
        self.vehicles = fe.VehicleServiceClient(transport=VehicleServiceGrpcTransport(channel=self.channel))
        self.deliveries = fd.DeliveryServiceClient(transport=DeliveryServiceGrpcTransport(channel=self.channel))
        return self

    def client(self, instance):
        """Clients that call only one of the instances."""
        channel = self.instances[instance].channel
        return (fe.TripServiceClient(transport=TripServiceGrpcTransport(channel=channel)),
                fe.VehicleServiceClient(transport=VehicleServiceGrpcTransport(channel=channel)))

    def token(self, role="server", provider=PROVIDER, trip=None, vehicle=None, lifetime=3600, now=None,
              authorization=None, **overrides):
        """A Fleet Engine JWT minted with google-auth from the key file; `authorization` adds the
        Deliveries API's claims (deliveryvehicleid, taskid, taskids, trackingid)."""
        path = self.keys.get((provider, role)) or self.add_key(role, provider)
        info = json.load(open(path))
        signer = crypt.RSASigner.from_service_account_info(info)
        iat = int(now if now is not None else time.time())
        claims = {"iss": info["client_email"], "sub": info["client_email"],
                  "aud": "https://fleetengine.googleapis.com/", "iat": iat, "exp": iat + lifetime}
        authorization = dict(authorization or {})
        if trip:
            authorization["tripid"] = trip
        if vehicle:
            authorization["vehicleid"] = vehicle
        if authorization:
            claims["authorization"] = authorization
        claims.update(overrides)
        return jwt.encode(signer, claims).decode()

    def md(self, **kwargs):
        return [("authorization", "Bearer " + self.token(**kwargs))]

    def kill(self, sig_kill=True):
        for instance in self.instances:
            instance.kill(sig_kill)

    def stop(self):
        for instance in self.instances:
            if instance.running():
                instance.kill(sig_kill=False)


@pytest.fixture
def fleetd():
    server = Fleetd().start()
    yield server
    server.stop()


def vehicle(**overrides):
    v = dict(vehicle_state=fe.VehicleState.ONLINE, supported_trip_types=[fe.TripType.EXCLUSIVE, fe.TripType.SHARED],
             maximum_capacity=4, vehicle_type=fe.Vehicle.VehicleType(category=fe.Vehicle.VehicleType.Category.AUTO))
    v.update(overrides)
    return fe.Vehicle(**v)


def trip(vehicle_id="", **overrides):
    t = dict(trip_type=fe.TripType.EXCLUSIVE,
             pickup_point=fe.TerminalLocation(point={"latitude": 43.7384, "longitude": 7.4246}),
             dropoff_point=fe.TerminalLocation(point={"latitude": 43.7396, "longitude": 7.4275}),
             vehicle_id=vehicle_id)
    t.update(overrides)
    return fe.Trip(**t)


def mask(*paths):
    return field_mask_pb2.FieldMask(paths=list(paths))


@pytest.fixture(scope="module")
def monaco_graph(tmp_path_factory):
    """A road graph of Monaco, built once per test module."""
    path = str(tmp_path_factory.mktemp("graph") / "monaco.graph")
    subprocess.run([FLEETD, "graph", "build", "--osm", MONACO, "--out", path], check=True, capture_output=True)
    return path

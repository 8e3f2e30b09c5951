"""Grading on Dask, safely: mutual TLS, loopback by default, plain data back, no pickle from the cluster.

Dask's own protocol trusts every peer: a scheduler runs whatever function a
client sends, and a client unpickles what comes back (a task's type, an
exception, a ``warn`` event, any ``__Pickled__`` frame), whatever its
``deserializers`` say. So who may connect is the trust boundary:

* :func:`make_certs` (``python -m course.grading dask-certs [DIR]``, ``make
  dask-certs``) writes a private CA and two certificates it signs: ``node``
  for the scheduler and the workers, ``instructor`` for ``grade-class``. Keys
  are 0600 in a 0700 folder (default ``.judge/dask``, which the sandbox never
  mounts). The scheduler and the workers require a certificate signed by that
  CA from every peer (Dask's TLS contexts are ``CERT_REQUIRED`` both ways), so
  a client or a worker without one is refused at the handshake.
* :func:`scheduler_command` and :func:`worker_command` (``python -m
  course.grading dask-cluster``, ``make dask-cluster``) start them with those
  certificates, on 127.0.0.1 unless asked, with the dashboard on loopback
  (``--no-dashboard`` alone still opened one on a worker), and :func:`listening`
  says which addresses their processes really listen on.
* :func:`client` is the grading client: ``tls://`` only, the instructor's
  certificate, ``deserializers=["msgpack"]`` (a result serialized with pickle
  is refused), the ``print``/``warn`` event handlers removed, and
  :func:`no_unpickling` for its lifetime: ``distributed.protocol.pickle.loads``
  and the client module's own ``pickle`` refuse, so nothing the cluster sends
  is unpickled in the instructor's process; a refused pickle reaches the
  grader as an error, never as code.
* A task returns a JSON string, which :func:`parse_result` checks (size, keys,
  types) before anything reads it.

What a worker can still do is lie about a submission it ran: a worker node is
the instructor's machine, as trusted as the grader. That is why a worker without
the sandbox refuses to run a submission (student code there could read the
worker's key) unless the instructor allows degraded grading.
"""
from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import os
import stat
import sys
from pathlib import Path

from course.grading.paths import DASK_CERTS

DEFAULT_DIR = DASK_CERTS
CA, NODE, INSTRUCTOR = "ca", "node", "instructor"
RESULT_BYTES = 64 * 1024  # a task's JSON summary; far more than an honest one needs


class DaskSecurityError(RuntimeError):
    """The cluster or its certificates are not safe to grade with; the message says what to do."""


class RefusedPickle(TypeError):
    """Raised instead of unpickling bytes that came from the cluster (a TypeError: Dask's handlers expect one)."""


# --- certificates --------------------------------------------------------------------------------------

def paths(folder: Path, name: str) -> tuple[Path, Path]:
    """The certificate and the key file of ``name`` (``ca``, ``node`` or ``instructor``) in ``folder``."""
    return Path(folder) / f"{name}.pem", Path(folder) / f"{name}-key.pem"


def _write_private(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.chmod(path, mode)


def make_certs(folder: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1"), days: int = 365) -> dict[str, Path]:
    """Write a private CA and the ``node`` and ``instructor`` certificates it signs into ``folder``.

    ``folder`` is created 0700 (it must not exist, or be empty and not a link); keys are written 0600 with
    ``O_EXCL | O_NOFOLLOW``. ``hosts`` go into the certificates' subject alternative names (Dask does
    not check host names, but other TLS tools do). Returns the written files by role.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(folder)
    if folder.is_symlink():
        raise DaskSecurityError(f"{folder} is a symbolic link; choose a real folder")
    if folder.exists() and any(folder.iterdir()):
        raise DaskSecurityError(f"{folder} is not empty: remove it first to make new certificates "
                                "(the scheduler and every worker then need the new ones)")
    old = os.umask(0o077)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    finally:
        os.umask(old)
    os.chmod(folder, 0o700)
    now = datetime.datetime.now(datetime.timezone.utc)
    pem = serialization.Encoding.PEM

    def key_pem(key) -> bytes:
        return key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "PyTorch Internals course grading"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (x509.CertificateBuilder().subject_name(name("course grading CA")).issuer_name(name("course grading CA"))
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                            content_commitment=False, key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
               .sign(ca_key, hashes.SHA256()))
    sans = []
    for h in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    written = {}
    ca_pem, ca_key_pem = paths(folder, CA)
    _write_private(ca_key_pem, key_pem(ca_key), 0o600)
    _write_private(ca_pem, ca_cert.public_bytes(pem), 0o644)
    written[CA] = ca_pem
    for role, cn in ((NODE, "course grading scheduler and workers"), (INSTRUCTOR, "course grading instructor")):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca_cert.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=days))
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                      ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                .add_extension(x509.SubjectAlternativeName(sans), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        cert_path, key_path = paths(folder, role)
        _write_private(key_path, key_pem(key), 0o600)
        _write_private(cert_path, cert.public_bytes(pem), 0o644)
        written[role] = cert_path
    return written


def check_certs(folder: Path, role: str) -> tuple[Path, Path, Path]:
    """The CA file, certificate and key of ``role`` in ``folder``, after checking they are private.

    Raises :class:`DaskSecurityError` when a file is missing or a link, the folder is open to others, or
    a key is readable by anyone but its owner.
    """
    folder = Path(folder)
    ca_pem = paths(folder, CA)[0]
    cert, key = paths(folder, role)
    hint = f"make them with `python -m course.grading dask-certs {folder}` (or `make dask-certs`)"
    for p in (ca_pem, cert, key):
        try:
            st = os.lstat(p)
        except OSError:
            raise DaskSecurityError(f"no TLS certificates for Dask: {p} is missing; {hint}") from None
        if not stat.S_ISREG(st.st_mode):
            raise DaskSecurityError(f"{p} is not a regular file (a link?); {hint}")
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o077:
        raise DaskSecurityError(f"{folder} must be a folder only its owner can open (chmod 700 {folder})")
    if os.lstat(key).st_mode & 0o077:
        raise DaskSecurityError(f"{key} is readable by others (chmod 600 {key})")
    return ca_pem, cert, key


def check_address(address: str) -> str:
    """``address`` if it is a ``tls://`` address; else :class:`DaskSecurityError` (plain tcp has no authentication)."""
    if not isinstance(address, str) or not address.startswith("tls://"):
        raise DaskSecurityError(
            f"refusing the Dask scheduler {address!r}: only tls:// addresses, with the course's certificates "
            "(anyone who reaches a tcp:// scheduler runs code as you). Start the cluster with "
            "`python -m course.grading dask-cluster` (or `make dask-cluster`)")
    return address


def security(folder: Path, role: str = INSTRUCTOR):
    """A ``distributed.security.Security`` for ``role``: mutual TLS with the course's CA, encryption required."""
    from distributed.security import Security

    ca_pem, cert, key = check_certs(folder, role)
    kind = "client" if role == INSTRUCTOR else "worker"
    return Security(require_encryption=True, tls_ca_file=str(ca_pem), **{f"tls_{kind}_cert": str(cert),
                                                                            f"tls_{kind}_key": str(key)})


# --- the grading client --------------------------------------------------------------------------------

@contextlib.contextmanager
def no_unpickling():
    """While inside, nothing in this process unpickles through Dask: every such call raises :class:`RefusedPickle`.

    Yields a list that collects one line per refusal. Dask's client unpickles, whatever its
    ``deserializers``, a ``__Pickled__`` frame (``distributed.protocol.core.loads``), a finished task's
    type and an error's exception and traceback (through ``distributed.protocol.pickle.loads``), and a
    ``warn`` event (the stdlib ``pickle`` that ``distributed.client`` imported): all of these are replaced.
    The one exception: the exact bytes of ``pickle.dumps(str)`` (an honest finished task's type) give ``str``.
    """
    import types

    import distributed.client
    import distributed.protocol.pickle as dpickle

    refused: list[str] = []
    # An honest worker reports each finished task's type as a pickle; ours are all str. Those exact bytes
    # are answered without unpickling anything, so that only what is not known is refused (and counted).
    known = {bytes(dpickle.dumps(str)): str}

    def refuse(data=b"", *args, **kwargs):
        if isinstance(data, (bytes, bytearray, memoryview)) and bytes(data) in known:
            return known[bytes(data)]
        refused.append(f"{len(data) if hasattr(data, '__len__') else '?'} bytes")
        raise RefusedPickle("refused to unpickle data from the Dask cluster (the grader takes plain data only)")

    stdlib = distributed.client.pickle
    shim = types.SimpleNamespace(**{k: getattr(stdlib, k) for k in dir(stdlib) if not k.startswith("__")})
    shim.loads = shim.load = shim.Unpickler = refuse
    saved = (dpickle.loads, distributed.client.loads, distributed.client.pickle)
    dpickle.loads = distributed.client.loads = refuse
    distributed.client.pickle = shim
    try:
        yield refused
    finally:
        dpickle.loads, distributed.client.loads, distributed.client.pickle = saved


def client(address: str, certs: Path, timeout: float = 60):
    """A ``distributed.Client`` for grading: see the module docstring. Call inside :func:`no_unpickling`."""
    from distributed import Client

    sec = security(certs, INSTRUCTOR)
    try:
        c = Client(check_address(address), security=sec, timeout=timeout, deserializers=["msgpack"],
                   direct_to_workers=False)
    except (OSError, TimeoutError) as err:
        raise DaskSecurityError(f"could not reach the Dask scheduler at {address} with the certificates in "
                                f"{certs}: {err}") from None
    for topic in ("print", "warn"):  # a worker's events, unpickled or printed raw: not for the grader
        with contextlib.suppress(Exception):
            c.unsubscribe_topic(topic)
    return c


def report_stream_broken(c) -> bool:
    """Whether ``c``'s stream from the scheduler has ended (after refused data, it does not come back)."""
    task = getattr(c, "_handle_report_task", None)
    return task is not None and task.done()


def close(c) -> None:
    """Close the client ``c``, also after its stream from the scheduler ended on refused data."""
    if report_stream_broken(c):
        c._handle_report_task = None  # Dask's close would re-raise the refusal and leave the client half-closed
    with contextlib.suppress(Exception):
        c.close(timeout=30)


def parse_result(value: object, expect: dict[str, type]) -> dict:
    """A task's JSON result as a dict with exactly the keys of ``expect``, each of its type; else ``ValueError``.

    ``float`` accepts an int too; ``bool`` and ``int`` are told apart.
    """
    if not isinstance(value, str):
        raise ValueError(f"the worker sent a {type(value).__name__}, not a JSON string")
    if len(value) > RESULT_BYTES:
        raise ValueError(f"the worker's result is {len(value)} characters (at most {RESULT_BYTES})")
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        raise ValueError("the worker's result is not JSON") from None
    if not isinstance(data, dict) or set(data) != set(expect):
        raise ValueError("the worker's result does not have the expected keys")
    for k, typ in expect.items():
        v = data[k]
        ok = type(v) is typ or (typ is float and type(v) is int)
        if not ok:
            raise ValueError(f"the worker's result has a {type(v).__name__} for {k!r}, not a {typ.__name__}")
    return data


# --- the cluster -----------------------------------------------------------------------------------------

_ROUTES = "DASK_DISTRIBUTED__"  # Dask's configuration through the environment


def _dask() -> str:
    return str(Path(sys.executable).parent / "dask")


def scheduler_command(certs: Path, host: str = "127.0.0.1", port: int = 8786, dashboard: str | None = None,
                      scheduler_file: Path | None = None) -> list[str]:
    """``dask scheduler`` with the node certificate, listening on ``tls://host:port`` (through ``env``).

    The dashboard (unauthenticated HTTP) is off unless ``dashboard`` is an address; then it binds there.
    Off, Dask still opens its HTTP server: here on ``host``, a random port, with no route.
    """
    ca_pem, cert, key = check_certs(certs, NODE)
    cmd = [_dask(), "scheduler", "--host", f"tls://{host}", "--port", str(port), "--tls-ca-file", str(ca_pem),
           "--tls-cert", str(cert), "--tls-key", str(key)]
    if dashboard:
        cmd += ["--dashboard", "--dashboard-address", dashboard]
    else:
        # --no-dashboard alone still serves HTTP routes (info pages, logs, a proxy) on 0.0.0.0:8787: no route,
        # on loopback.
        cmd = ["env", f"{_ROUTES}SCHEDULER__HTTP__ROUTES=[]", *cmd, "--no-dashboard", "--dashboard-address",
               f"{host}:0"]
    if scheduler_file is not None:
        cmd += ["--scheduler-file", str(scheduler_file)]
    return cmd


def worker_command(certs: Path, address: str, host: str = "127.0.0.1", name: str | None = None,
                   local_directory: Path | None = None, nthreads: int = 1) -> list[str]:
    """``dask worker`` (one single-threaded process, and its nanny) with the node certificate, on ``host``.

    The worker's and nanny's listeners bind to ``host``; the dashboard is off, and the HTTP server Dask
    opens anyway binds to ``host`` with no route.
    """
    ca_pem, cert, key = check_certs(certs, NODE)
    cmd = ["env", f"{_ROUTES}WORKER__HTTP__ROUTES=[]", _dask(), "worker", check_address(address), "--host", host,
           "--protocol", "tls", "--tls-ca-file", str(ca_pem), "--tls-cert", str(cert), "--tls-key", str(key),
           "--nthreads", str(nthreads), "--nworkers", "1", "--memory-limit", "0",
           "--no-dashboard", "--dashboard-address", f"{host}:0"]
    if name:
        cmd += ["--name", name]
    if local_directory is not None:
        cmd += ["--local-directory", str(local_directory)]
    return cmd


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    out.add(link[8:-1])
    return out


def _children(pid: int) -> list[int]:
    kids = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                kids += [int(k) for k in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    return kids


def _hex_address(text: str, v6: bool) -> str:
    raw = bytes.fromhex(text)
    if v6:  # four little-endian 32-bit words
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
        return str(ipaddress.IPv6Address(raw))
    return str(ipaddress.IPv4Address(raw[::-1]))


def listening(pids: list[int]) -> list[tuple[str, int, int]]:
    """Every TCP socket in LISTEN state held by ``pids`` or their descendants: (address, port, pid)."""
    todo, seen = list(pids), set()
    owner: dict[str, int] = {}
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for inode in _socket_inodes(pid):
            owner.setdefault(inode, pid)
        todo += _children(pid)
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                parts = line.split()
                if len(parts) > 9 and parts[3] == "0A" and parts[9] in owner:  # 0A: LISTEN
                    addr, port = parts[1].split(":")
                    found.append((_hex_address(addr, v6), int(port, 16), owner[parts[9]]))
    return sorted(found)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposed(sockets: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The sockets of :func:`listening` that are not on a loopback address."""
    return [s for s in sockets if not ipaddress.ip_address(s[0]).is_loopback]


def serve(certs: Path, workers: int = 2, host: str = "127.0.0.1", port: int = 8786, dashboard: str | None = None,
          join: str | None = None, scheduler_file: Path | None = None, log=print, env: dict | None = None) -> int:
    """``python -m course.grading dask-cluster``: a TLS scheduler and ``workers`` workers on ``host``, until Ctrl-C.

    With ``join`` (a ``tls://`` scheduler address), only workers, for another node. Prints the address, and
    every listening socket of its processes; refuses to go on if one is off loopback while ``host`` is on
    it. Returns the exit status (0 after Ctrl-C).
    """
    import signal
    import subprocess
    import tempfile
    import time

    scratch = Path(tempfile.mkdtemp(prefix="dask-cluster-"))
    os.chmod(scratch, 0o700)
    procs: list[subprocess.Popen] = []

    def start(cmd: list[str], name: str) -> subprocess.Popen:
        p = subprocess.Popen(cmd, stdout=open(scratch / f"{name}.log", "w"), stderr=subprocess.STDOUT,
                             start_new_session=True, env=env)
        procs.append(p)
        return p

    try:
        if join:
            address = check_address(join)
        else:
            sf = Path(scheduler_file) if scheduler_file else scratch / "scheduler.json"
            sched = start(scheduler_command(certs, host, port, dashboard, sf), "scheduler")
            address = ""
            for _ in range(240):
                with contextlib.suppress(OSError, ValueError):
                    address = json.loads(sf.read_text()).get("address", "")
                if address or sched.poll() is not None:
                    break
                time.sleep(0.5)
            if not address:
                log(f"the scheduler did not start; its log: {scratch / 'scheduler.log'}")
                return 1
        for i in range(workers):
            start(worker_command(certs, address, host, name=f"grader-{os.uname().nodename}-{i}",
                                 local_directory=scratch / f"worker-{i}"), f"worker-{i}")
        time.sleep(3)
        sockets = listening([p.pid for p in procs])
        for addr, p, pid in sockets:
            log(f"listening: {addr}:{p} (pid {pid})")
        bad = exposed(sockets)
        if bad and _loopback(host):
            log(f"refusing: listening beyond loopback: {bad}")
            return 1
        log(f"Dask scheduler: {address} (logs in {scratch}); grade with\n"
            f"  python -m course.grading grade-class CHAPTER... --dask {address} --dask-certs {certs}\n"
            "Ctrl-C stops the cluster.")
        while all(p.poll() is None for p in procs):
            time.sleep(1)
        log(f"a process of the cluster exited; logs in {scratch}")
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for p in procs[::-1]:
            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs[::-1]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()

"""Side-by-side benchmark of Hangar against nginx, ovirt-imageio and Glance.

Run through bench/run, which installs the peers. Every system runs on this
machine on a free loopback port, on the same data, in the same run; the
results file gives absolute figures, ratios to each peer, the targets of
issue 5 and the machine's own limits measured in the same run.
"""
import argparse
import datetime
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
GiB = 1 << 30


def log(*a):
    print("[bench]", *a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(cond, what, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if cond():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"bench: {what} did not come up in {timeout} s")


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status < 500
    except urllib.error.HTTPError as e:
        return e.code < 500
    except OSError:
        return False


def request(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=600) as r:
        data = r.read()
    return json.loads(data) if data else None


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


class Server:
    """A peer started by the harness in its own process group, stopped by PID."""

    def __init__(self, name, cmd, log_path, env=None, cwd=None):
        self.name = name
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                     start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def cpu(self):
        """CPU seconds of the server and its worker children."""
        total = 0
        for pid in [self.pid] + children(self.pid):
            try:
                f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(x) for x in f[11:15])  # utime stime cutime cstime
        return total / CLK_TCK

    def stop(self):
        if self.proc.poll() is None:
            kids = children(self.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            for k in kids:
                try:
                    os.kill(k, signal.SIGKILL)
                except OSError:
                    pass
        self.log.close()


def children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], stdout=subprocess.PIPE, text=True).stdout
    return [int(x) for x in out.split()]


def lo_bytes():
    for line in Path("/proc/net/dev").read_text().splitlines():
        if line.strip().startswith("lo:"):
            return int(line.split(":")[1].split()[8])  # transmitted bytes
    return 0


# ---------------------------------------------------------------- peers

class Hangar:
    name = "Hangar"

    def __init__(self, w, binary):
        self.bin = binary
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.srv = Server("hangar", [binary, "serve", "--data", str(w / "hangar"), "--listen", f"127.0.0.1:{self.port}",
                                     "--log-level", "warn"], w / "hangar.log")
        wait_until(lambda: http_ok(self.url + "/healthz"), "hangar")

    def create(self, name):
        return request("POST", self.url + "/v2/images", json.dumps(
            {"name": name, "disk_format": "raw", "container_format": "bare"}).encode(),
            {"Content-Type": "application/json"})["id"]

    def cli(self, *args):
        return run([self.bin, *args, "--url", self.url, "-o", "json"])

    def read_transfer(self, image_id):
        t = request("POST", f"{self.url}/v2/images/{image_id}/transfers", b'{"ops": ["read"]}',
                    {"Content-Type": "application/json"})
        return t["transfer_url"]

    def wait_checksums(self, image_id):
        wait_until(lambda: request("GET", f"{self.url}/v2/images/{image_id}")["checksum"], "checksums", 600)


class Nginx:
    name = "nginx"

    def __init__(self, w, root):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        conf = w / "nginx.conf"
        conf.write_text(f"""
daemon off;
master_process on;
worker_processes auto;
pid {w}/nginx.pid;
error_log {w}/nginx-error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on; tcp_nopush on; tcp_nodelay on;
    keepalive_requests 1000000;
    client_body_temp_path {w}/nginx-tmp; proxy_temp_path {w}/nginx-tmp;
    fastcgi_temp_path {w}/nginx-tmp; uwsgi_temp_path {w}/nginx-tmp; scgi_temp_path {w}/nginx-tmp;
    server {{ listen 127.0.0.1:{self.port}; root {root}; }}
}}
""")
        (w / "nginx-tmp").mkdir(exist_ok=True)
        self.srv = Server("nginx", ["/usr/sbin/nginx", "-p", str(w), "-c", str(conf)], w / "nginx.out")
        wait_until(lambda: http_ok(self.url + "/"), "nginx")

    def stop(self):
        if self.srv.proc.poll() is None:
            self.srv.proc.send_signal(signal.SIGQUIT)
            try:
                self.srv.proc.wait(15)
            except subprocess.TimeoutExpired:
                pass
        self.srv.stop()


class Imageio:
    name = "ovirt-imageio"

    def __init__(self, w, venv):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.venv = venv
        d = w / "imageio"
        (d / "conf" / "conf.d").mkdir(parents=True)
        (d / "run").mkdir()
        self.ctl = d / "run" / "control.sock"
        (d / "conf" / "conf.d" / "99-bench.conf").write_text(f"""[daemon]
systemd_enable = false
drop_privileges = false
run_dir = {d}/run
[tls]
enable = false
[remote]
host = 127.0.0.1
port = {self.port}
[local]
enable = false
[control]
transport = unix
socket = {self.ctl}
[handlers]
keys = logfile
[handler_logfile]
args = ("{d}/daemon.log",)
""")
        self.srv = Server("ovirt-imageio", [f"{venv}/bin/ovirt-imageio", "-c", str(d / "conf")], d / "stdout.log")
        wait_until(lambda: "Ready for requests" in (d / "daemon.log").read_text(), "ovirt-imageio")
        self.n = 0

    def ticket(self, path, size, op):
        self.n += 1
        tid = f"bench-{self.n}"
        body = json.dumps({"uuid": tid, "size": size, "url": f"file://{path}", "timeout": 3000, "ops": [op]})
        run(["curl", "-sf", "--unix-socket", str(self.ctl), "-X", "PUT", "-d", body, f"http://localhost/tickets/{tid}"])
        return f"{self.url}/images/{tid}"

    def client(self, *args):
        return run([f"{self.venv}/bin/python", str(ROOT / "test/e2e/testdata/imageio_client.py"), *args])


class Glance:
    name = "Glance"

    def __init__(self, w, venv):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.venv = venv
        d = w / "glance"
        for sub in ("images", "staging", "tasks", "lock", "home"):
            (d / sub).mkdir(parents=True)
        shutil.copy("/etc/glance/glance-api-paste.ini", d / "glance-api-paste.ini")
        conf = d / "glance-api.conf"
        # No Keystone (the paste pipeline's unauthenticated context), SQLite,
        # the file store; one worker per core, as Hangar and nginx get.
        conf.write_text(f"""[DEFAULT]
bind_host = 127.0.0.1
bind_port = {self.port}
workers = {os.cpu_count()}
log_file = {d}/glance-api.log
use_stderr = false
enabled_backends = fs:file
[database]
connection = sqlite:///{d}/glance.sqlite
[paste_deploy]
config_file = {d}/glance-api-paste.ini
[oslo_concurrency]
lock_path = {d}/lock
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = {d}/images/
[os_glance_staging_store]
filesystem_store_datadir = {d}/staging/
[os_glance_tasks_store]
filesystem_store_datadir = {d}/tasks/
""")
        run(["/usr/bin/glance-manage", "--config-file", str(conf), "db_sync"])
        self.srv = Server("glance-api", ["/usr/bin/glance-api", "--config-file", str(conf)], d / "stdout.log")
        wait_until(lambda: http_ok(self.url + "/healthcheck"), "glance-api", 120)
        self.env = dict(os.environ, OS_IMAGE_URL=self.url, OS_AUTH_TOKEN="bench", HOME=str(d / "home"))

    def create(self, name):
        return request("POST", self.url + "/v2/images", json.dumps(
            {"name": name, "disk_format": "raw", "container_format": "bare"}).encode(),
            {"Content-Type": "application/json"})["id"]

    def cli(self, *args):
        return run([f"{self.venv}/bin/glance", *args], env=self.env)


# ---------------------------------------------------------------- measuring

def curl_get(url, out="/dev/null"):
    """One GET; returns seconds (curl's own timing) and bytes."""
    r = run(["curl", "-sf", "-o", out, "-w", "%{time_total} %{size_download}", url])
    t, n = r.stdout.split()
    return float(t), int(n)


def timed(fn):
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def median(xs):
    return statistics.median(xs) if xs else float("nan")


class Results:
    def __init__(self):
        self.rows = {}  # scenario -> list of dict(system, metric -> value)

    def add(self, scenario, system, **metrics):
        self.rows.setdefault(scenario, []).append(dict(system=system, **metrics))
        log(scenario, system, metrics)

    def get(self, scenario, system, metric):
        for r in self.rows.get(scenario, []):
            if r["system"] == system:
                return r.get(metric)
        return None


def machine_limits(w, size):
    """memcpy, loopback TCP and disk write+fsync, measured in this run."""
    buf = bytearray(256 << 20)
    dst = bytearray(256 << 20)
    reps = max(1, (4 * size) // len(buf))
    t = timed(lambda: [dst.__setitem__(slice(None), buf) for _ in range(reps)])
    memcpy = reps * len(buf) / t / 1e9

    total = 2 * size
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def sink():
        c, _ = srv.accept()
        b = bytearray(1 << 20)
        got = 0
        while got < total:
            n = c.recv_into(b)
            if not n:
                break
            got += n
        c.close()

    th = threading.Thread(target=sink)
    th.start()
    chunk = bytes(1 << 20)
    with socket.create_connection(("127.0.0.1", port)) as c:
        t0 = time.monotonic()
        for _ in range(total // len(chunk)):
            c.sendall(chunk)
    th.join()
    tcp = total / (time.monotonic() - t0) / 1e9
    srv.close()

    path = w / "disk-probe"
    r = subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={size >> 20}", "conv=fsync"],
                       stderr=subprocess.PIPE, text=True, check=True)
    m = re.search(r"copied, ([\d.]+) s", r.stderr)
    disk = size / float(m.group(1)) / 1e9
    path.unlink()
    return {"memcpy GB/s (one core, Python)": memcpy, "loopback TCP GB/s (one stream, Python)": tcp,
            "disk write+fsync GB/s (dd)": disk}


# ---------------------------------------------------------------- scenarios

def s1_download_curl(res, cfg, sys_, data):
    """Cached 1 GiB, one stream, curl to /dev/null: GB/s and server CPU s/GiB."""
    hangar, nginx, imageio, glance = sys_["Hangar"], sys_["nginx"], sys_["ovirt-imageio"], sys_["Glance"]
    targets = [
        ("Hangar (Image API)", hangar.srv, f"{hangar.url}/v2/images/{data['hangar_id']}/file"),
        ("Hangar (transfer API)", hangar.srv, hangar.read_transfer(data["hangar_id"])),
        ("nginx", nginx.srv, f"{nginx.url}/dense.raw"),
        ("ovirt-imageio", imageio.srv, imageio.ticket(data["dense"], data["size"], "read")),
        ("Glance", glance.srv, f"{glance.url}/v2/images/{data['glance_id']}/file"),
    ]
    for name, srv, url in targets:
        curl_get(url)  # warm the cache
        rates, cpus = [], []
        for _ in range(cfg.reps):
            c0 = srv.cpu()
            t, n = curl_get(url)
            cpus.append((srv.cpu() - c0) / (n / GiB))
            rates.append(n / t / 1e9)
            assert n == data["size"], f"{name}: {n} bytes"
        res.add("1", name, gbps=median(rates), cpu=median(cpus), samples=rates)


def s2_download_clients(res, cfg, sys_, data, w):
    hangar, imageio, glance = sys_["Hangar"], sys_["ovirt-imageio"], sys_["Glance"]
    out = w / "out.raw"

    def best(name, fn, check=True):
        ts = []
        for _ in range(cfg.reps):
            out.unlink(missing_ok=True)
            ts.append(timed(fn))
            if check:
                assert out.stat().st_size == data["size"], name
        res.add("2", name, seconds=median(ts), gbps=data["size"] / median(ts) / 1e9)
        out.unlink(missing_ok=True)

    best("hangar download (4 connections)", lambda: hangar.cli("download", data["hangar_id"], str(out), "--connections", "4"))
    best("ovirt-imageio client (4 workers)", lambda: imageio.client("download", imageio.ticket(data["dense"], data["size"], "read"), str(out), "4"))
    best("glance image-download", lambda: glance.cli("image-download", "--file", str(out), data["glance_id"]))


def s3_upload(res, cfg, sys_, data, w):
    hangar, imageio, glance = sys_["Hangar"], sys_["ovirt-imageio"], sys_["Glance"]
    src, size = data["dense"], data["size"]

    def best(name, prepare, fn):
        ts = []
        for i in range(cfg.reps):
            arg = prepare(i)
            ts.append(timed(lambda: fn(arg)))
        res.add("3", name, seconds=median(ts), gbps=size / median(ts) / 1e9)

    def hangar_put(image_id):
        run(["curl", "-sf", "-X", "PUT", "-H", "Content-Type: application/octet-stream", "-T", src,
             f"{hangar.url}/v2/images/{image_id}/file"])

    def glance_put(image_id):
        run(["curl", "-sf", "-X", "PUT", "-H", "Content-Type: application/octet-stream", "-H", "X-Auth-Token: bench",
             "-T", src, f"{glance.url}/v2/images/{image_id}/file"])

    def imageio_target(i):
        target = w / f"imageio-up-{i}.raw"
        target.unlink(missing_ok=True)
        os.truncate(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644), size)
        return imageio.ticket(target, size, "write")

    best("hangar upload (4 connections)", lambda i: f"up-{i}-{time.time_ns()}",
         lambda name: hangar.cli("upload", src, "--name", name, "--connections", "4"))
    best("ovirt-imageio client (4 workers)", imageio_target, lambda url: imageio.client("upload", src, url, "4"))
    best("curl PUT → Hangar Image API", lambda i: hangar.create(f"put-{i}"), hangar_put)
    best("curl PUT → Glance", lambda i: glance.create(f"put-{i}"), glance_put)
    for i in range(cfg.reps):
        (w / f"imageio-up-{i}.raw").unlink(missing_ok=True)


def s4_sparse(res, cfg, sys_, data, w):
    hangar, imageio = sys_["Hangar"], sys_["ovirt-imageio"]
    src, vsize = data["sparse"], data["sparse_size"]
    out = w / "sparse-out.raw"
    target = w / "imageio-sparse.raw"
    for system in ("Hangar", "ovirt-imageio"):
        ups, downs, up_wire, down_wire = [], [], [], []
        for i in range(cfg.reps):
            out.unlink(missing_ok=True)
            b0 = lo_bytes()
            if system == "Hangar":
                name = f"sparse-{i}-{time.time_ns()}"
                up = {}
                ups.append(timed(lambda: up.update(json.loads(hangar.cli("upload", src, "--name", name, "--connections", "4").stdout))))
                b1 = lo_bytes()
                image_id = up["id"]
                hangar.wait_checksums(image_id)  # not timed: keep the next runs' CPU clean
                b2 = lo_bytes()
                downs.append(timed(lambda: hangar.cli("download", image_id, str(out), "--connections", "4")))
            else:
                target.unlink(missing_ok=True)
                os.truncate(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644), vsize)
                url = imageio.ticket(target, vsize, "write")
                b0 = lo_bytes()
                ups.append(timed(lambda: imageio.client("upload", src, url, "4")))
                b1 = lo_bytes()
                url = imageio.ticket(target, vsize, "read")
                b2 = lo_bytes()
                downs.append(timed(lambda: imageio.client("download", url, str(out), "4")))
            b3 = lo_bytes()
            up_wire.append(b1 - b0)
            down_wire.append(b3 - b2)
            assert out.stat().st_size == vsize
        res.add("4", system, up_s=median(ups), down_s=median(downs), up_wire=median(up_wire),
                down_wire=median(down_wire), data=data["sparse_data"])
    out.unlink(missing_ok=True)
    target.unlink(missing_ok=True)


WRK_LUA = """
local paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
"""


def parse_wrk(text):
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))

    def lat(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v * {"us": 1e-3, "ms": 1, "s": 1e3}[unit]

    return rps, lat("50"), lat("99")


def s5_small(res, cfg, sys_, data, w):
    hangar, nginx = sys_["Hangar"], sys_["nginx"]
    for system, paths in (("Hangar", data["small_hangar"]), ("nginx", data["small_nginx"])):
        base = hangar.url if system == "Hangar" else nginx.url
        lst = w / f"paths-{system}.txt"
        lst.write_text("\n".join(paths) + "\n")
        lua = w / f"rotate-{system}.lua"
        lua.write_text(WRK_LUA % lst)
        for conns in (16, 64):
            samples = []
            srv = hangar.srv if system == "Hangar" else nginx.srv
            for _ in range(cfg.reps):
                c0 = srv.cpu()
                out = run(["wrk", "-t1", f"-c{conns}", f"-d{cfg.wrk_seconds}s", "--latency", "-s", str(lua), base]).stdout
                rps, p50, p99 = parse_wrk(out)
                samples.append((rps, p50, p99, (srv.cpu() - c0) / (rps * cfg.wrk_seconds) * 1e6))
            pick = sorted(samples)[len(samples) // 2]
            res.add("5", f"{system} c{conns}", rps=pick[0], p50_ms=pick[1], p99_ms=pick[2], cpu_us=pick[3])


def s6_storm(res, cfg, sys_, data):
    hangar, nginx, glance = sys_["Hangar"], sys_["nginx"], sys_["Glance"]
    urls = {"Hangar": f"{hangar.url}/v2/images/{data['hangar_id']}/file", "nginx": f"{nginx.url}/dense.raw",
            "Glance": f"{glance.url}/v2/images/{data['glance_id']}/file"}
    for system, url in urls.items():
        curl_get(url)
        aggs, slowest = [], []
        for _ in range(cfg.reps):
            t0 = time.monotonic()
            procs = [subprocess.Popen(["curl", "-sf", "-o", "/dev/null", "-w", "%{time_total} %{size_download}", url],
                                      stdout=subprocess.PIPE, text=True) for _ in range(cfg.storm)]
            outs = [p.communicate()[0].split() for p in procs]
            wall = time.monotonic() - t0
            assert all(p.returncode == 0 and int(o[1]) == data["size"] for p, o in zip(procs, outs)), system
            aggs.append(cfg.storm * data["size"] / wall / 1e9)
            slowest.append(max(float(o[0]) for o in outs))
        res.add("6", system, gbps=median(aggs), slowest=median(slowest))


# ---------------------------------------------------------------- data

def make_data(w, cfg, hangar, glance, nginx_root):
    size = cfg.size
    dense = w / "dense.raw"
    with open("/dev/urandom", "rb") as r, open(dense, "wb") as f:
        for _ in range(size >> 20):
            f.write(r.read(1 << 20))
    os.link(dense, nginx_root / "dense.raw")
    sparse = w / "sparse.raw"
    vsize, next_ = 8 * size, 16
    with open(sparse, "wb") as f:
        f.truncate(vsize)
        ext = size // next_
        with open("/dev/urandom", "rb") as r:
            for i in range(next_):
                f.seek(i * (vsize // next_))
                f.write(r.read(ext))
    log("uploading the dense image to Hangar and Glance")
    hangar_id = json.loads(hangar.cli("upload", str(dense), "--name", "dense").stdout)["id"]
    hangar.wait_checksums(hangar_id)
    glance_id = glance.create("dense")
    run(["curl", "-sf", "-X", "PUT", "-H", "Content-Type: application/octet-stream", "-T", str(dense),
         f"{glance.url}/v2/images/{glance_id}/file"])
    log(f"making {cfg.small} small images")
    small_dir = nginx_root / "small"
    small_dir.mkdir()
    small_hangar, small_nginx = [], []
    conn = http.client.HTTPConnection("127.0.0.1", hangar.port)
    for i in range(cfg.small):
        body = os.urandom(4096)
        (small_dir / f"f{i:04d}.bin").write_bytes(body)
        small_nginx.append(f"/small/f{i:04d}.bin")
        conn.request("POST", "/v2/images", json.dumps({"name": f"small-{i}", "disk_format": "raw",
                                                        "container_format": "bare"}), {"Content-Type": "application/json"})
        image_id = json.loads(conn.getresponse().read())["id"]
        conn.request("PUT", f"/v2/images/{image_id}/file", body, {"Content-Type": "application/octet-stream"})
        r = conn.getresponse()
        r.read()
        assert r.status == 204, r.status
        small_hangar.append(f"/v2/images/{image_id}/file")
    conn.close()
    return {"dense": str(dense), "size": size, "sparse": str(sparse), "sparse_size": vsize,
            "sparse_data": next_ * (size // next_), "hangar_id": hangar_id, "glance_id": glance_id,
            "small_hangar": small_hangar, "small_nginx": small_nginx}


# ---------------------------------------------------------------- report

def ratio(a, b):
    return a / b if a and b else float("nan")


def targets(res, cfg):
    g = res.get
    t = []
    hz = g("1", "Hangar (Image API)", "gbps")
    ng = g("1", "nginx", "gbps")
    t.append(("(1) download GB/s vs nginx", ratio(hz, ng), 1.0, ">="))
    t.append(("(1) server CPU/GiB vs nginx", ratio(g("1", "Hangar (Image API)", "cpu"), g("1", "nginx", "cpu")), 1.5, "<="))
    t.append(("(2) hangar download vs imageio client (speed)", ratio(g("2", "ovirt-imageio client (4 workers)", "seconds"),
                                                                   g("2", "hangar download (4 connections)", "seconds")), 2.0, ">="))
    t.append(("(3) hangar upload vs imageio client (speed)", ratio(g("3", "ovirt-imageio client (4 workers)", "seconds"),
                                                                 g("3", "hangar upload (4 connections)", "seconds")), 2.0, ">="))
    t.append(("(3) Image API upload vs Glance (speed)", ratio(g("3", "curl PUT → Glance", "seconds"),
                                                            g("3", "curl PUT → Hangar Image API", "seconds")), 2.5, ">="))
    t.append(("(4) sparse upload vs imageio (speed)", ratio(g("4", "ovirt-imageio", "up_s"), g("4", "Hangar", "up_s")), 4.0, ">="))
    t.append(("(4) sparse download vs imageio (speed)", ratio(g("4", "ovirt-imageio", "down_s"), g("4", "Hangar", "down_s")), 4.0, ">="))
    t.append(("(4) upload wire bytes / data bytes", ratio(g("4", "Hangar", "up_wire"), g("4", "Hangar", "data")), 1.1, "<="))
    for c in (16, 64):
        t.append((f"(5) small GETs req/s vs nginx, {c} conns", ratio(g("5", f"Hangar c{c}", "rps"), g("5", f"nginx c{c}", "rps")), 1.0, ">="))
        t.append((f"(5) small GETs p50 ms, {c} conns", g("5", f"Hangar c{c}", "p50_ms"), 0.2, "<="))
    t.append(("(6) boot storm aggregate vs nginx", ratio(g("6", "Hangar", "gbps"), g("6", "nginx", "gbps")), 1.0, ">="))
    return [(label, v, goal, op, (v >= goal) if op == ">=" else (v <= goal)) for label, v, goal, op in t]


def versions(cfg):
    def out(cmd):
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return r.stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"

    pkg = lambda p: out(["dpkg-query", "-W", "-f=${Version}", p])
    return {"Hangar": out(["git", "-C", str(ROOT), "describe", "--always", "--dirty"]) + " (" + out(["go", "version"]) + ")",
            "nginx": pkg("nginx"), "glance-api": pkg("glance-api"),
            "ovirt-imageio": out([f"{cfg.venv}/bin/python", "-c",
                                  "import importlib.metadata as m; print(m.version('ovirt-imageio'))"]) + " (PyPI)",
            "wrk": pkg("wrk"), "curl": out(["curl", "--version"])}


def machine():
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(Path("/proc/meminfo").read_text().split()[1]) >> 20
    return f"{os.cpu_count()} × {cpu}, {mem} GiB RAM, Linux {platform.release()}, load average at start {os.getloadavg()[0]:.2f}"


def report(res, cfg, limits, out_dir, stamp, elapsed):
    f = []
    p = f.append
    p(f"# Hangar side-by-side benchmark, {stamp}\n")
    p(f"Command: `bench/run{' --quick' if cfg.quick else ''}` · took {elapsed / 60:.1f} min · {cfg.reps} repetition(s), medians.\n")
    p(f"Machine: {machine()}. Client and servers share the cores over loopback.\n")
    p("Versions: " + ", ".join(f"{k} {v}" for k, v in versions(cfg).items()) + ".\n")
    p(f"Data: dense {cfg.size >> 20} MiB of random bytes; sparse {8 * cfg.size >> 20} MiB virtual with "
      f"{cfg.size >> 20} MiB of data in 16 extents; {cfg.small} images of 4 KiB.\n")
    p("## Limits of this machine, same run\n")
    p("| limit | value |\n|---|---|")
    for k, v in limits.items():
        p(f"| {k} | {v:.2f} |")
    p("")
    p("## Targets\n")
    p("| target | measured | goal | met |\n|---|---|---|---|")
    for label, v, goal, op, met in targets(res, cfg):
        p(f"| {label} | {v:.2f} | {op} {goal} | {'yes' if met else '**no**'} |")
    p("")
    sec = {
        "1": ("1. Download of a cached image, one stream, curl to /dev/null", ["gbps", "cpu"], {"gbps": "GB/s", "cpu": "server CPU s/GiB"}, "nginx"),
        "2": ("2. Download with each system's best client, to a file", ["seconds", "gbps"], {"seconds": "s", "gbps": "GB/s"}, None),
        "3": ("3. Upload of the dense image", ["seconds", "gbps"], {"seconds": "s", "gbps": "GB/s"}, None),
        "4": ("4. Sparse image: wall time and bytes on the wire", ["up_s", "down_s", "up_wire", "down_wire"],
              {"up_s": "upload s", "down_s": "download s", "up_wire": "upload wire MiB", "down_wire": "download wire MiB"}, None),
        "5": ("5. Small objects: wrk over rotating paths", ["rps", "p50_ms", "p99_ms", "cpu_us"],
              {"rps": "req/s", "p50_ms": "p50 ms", "p99_ms": "p99 ms", "cpu_us": "server CPU µs/req"}, None),
        "6": (f"6. Boot storm: {cfg.storm} clients download the same image at once", ["gbps", "slowest"],
              {"gbps": "aggregate GB/s", "slowest": "slowest client s"}, "nginx"),
    }
    for key, (title, cols, names, _) in sec.items():
        rows = res.rows.get(key, [])
        if not rows:
            continue
        p(f"## {title}\n")
        p(f"![{title}]({stamp}-s{key}.png)\n")
        p("| system | " + " | ".join(names[c] for c in cols) + " | ratio to each peer |")
        p("|---|" + "---|" * len(cols) + "---|")
        main = cols[0]
        better_low = main in ("seconds", "up_s")
        for r in rows:
            vals = []
            for c in cols:
                v = r.get(c)
                vals.append(f"{v / (1 << 20):.0f}" if "wire" in c else (f"{v:,.0f}" if c == "rps" else f"{v:.2f}"))
            ratios = []
            if r["system"].startswith(("Hangar", "hangar", "curl PUT → Hangar")):
                for o in rows:
                    if o["system"].startswith(("Hangar", "hangar", "curl PUT → Hangar")) or not o.get(main) or not r.get(main):
                        continue
                    if key == "5" and o["system"][-3:] != r["system"][-3:]:
                        continue
                    x = o[main] / r[main] if better_low else r[main] / o[main]
                    ratios.append(f"{x:.2f}× {o['system']}")
            p(f"| {r['system']} | " + " | ".join(vals) + f" | {', '.join(ratios)} |")
        p("")
        chart(out_dir / f"{stamp}-s{key}.png", title, rows, cols[0], names[cols[0]])
    p("Ratios are speed ratios (higher is better for Hangar): for times, peer time / Hangar time.\n")
    (out_dir / f"{stamp}.md").write_text("\n".join(f))
    return out_dir / f"{stamp}.md"


def chart(path, title, rows, metric, label):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r["system"] for r in rows]
    vals = [r.get(metric) or 0 for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.5))
    colors = ["#2a7ab9" if n.lower().startswith(("hangar", "curl put → hangar")) else "#999999" for n in names]
    ax.barh(names, vals, color=colors)
    ax.invert_yaxis()
    ax.set_xlabel(label)
    ax.set_title(title, fontsize=10)
    for i, v in enumerate(vals):
        ax.text(v, i, f" {v:,.2f}", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hangar", required=True)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    cfg = ap.parse_args()
    cfg.venv = os.path.abspath(cfg.venv)
    cfg.hangar = os.path.abspath(cfg.hangar)
    if cfg.smoke:
        cfg.size, cfg.reps, cfg.small, cfg.wrk_seconds, cfg.storm = 16 << 20, 1, 20, 1, 4
    elif cfg.quick:
        cfg.size, cfg.reps, cfg.small, cfg.wrk_seconds, cfg.storm = 256 << 20, 1, 200, 3, 8
    else:
        cfg.size, cfg.reps, cfg.small, cfg.wrk_seconds, cfg.storm = GiB, 3, 1000, 5, 32
    cfg.quick = cfg.quick or cfg.smoke
    start = time.monotonic()
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    w = Path(tempfile.mkdtemp(prefix="hangar-bench.", dir="/var/tmp"))
    w.chmod(0o755)  # nginx's workers (www-data) read the files under it
    out_dir = w / "results" if cfg.smoke else ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    peers = []
    try:
        limits = machine_limits(w, min(cfg.size, GiB))
        nginx_root = w / "www"
        nginx_root.mkdir()
        hangar = Hangar(w, cfg.hangar)
        peers.append(hangar.srv)
        nginx = Nginx(w, nginx_root)
        peers.append(nginx)
        imageio = Imageio(w, cfg.venv)
        peers.append(imageio.srv)
        glance = Glance(w, cfg.venv)
        peers.append(glance.srv)
        systems = {"Hangar": hangar, "nginx": nginx, "ovirt-imageio": imageio, "Glance": glance}
        data = make_data(w, cfg, hangar, glance, nginx_root)
        res = Results()
        s1_download_curl(res, cfg, systems, data)
        s2_download_clients(res, cfg, systems, data, w)
        s3_upload(res, cfg, systems, data, w)
        s4_sparse(res, cfg, systems, data, w)
        s5_small(res, cfg, systems, data, w)
        s6_storm(res, cfg, systems, data)
        path = report(res, cfg, limits, out_dir, stamp, time.monotonic() - start)
        print(path.read_text())
        if cfg.smoke:  # the harness's own check: every scenario produced its rows
            want = {"1": 5, "2": 3, "3": 4, "4": 2, "5": 4, "6": 3}
            got = {k: len(res.rows.get(k, [])) for k in want}
            if got != want or len(list(out_dir.glob("*.png"))) != 6:
                raise SystemExit(f"bench smoke: rows {got}, want {want}")
        log("results:", path)
    finally:
        for p in reversed(peers):
            p.stop()
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()

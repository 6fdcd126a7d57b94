#!/usr/bin/env bash
# Regression walker for bad command-line input (issue 13 items 12-15): runs
# every `layersec` subcommand with nan, inf, -1, 1e308 and 1e-9 for every
# numeric option and with a FIFO, a directory and /dev/zero (a symlink too,
# for outputs) for every file option, each under `timeout 10`, and asserts
#   - no hang (exit != 124), no crash (exit < 128),
#   - a non-zero exit, and
#   - a message naming the option (or, for a file, the path it was given).
#
# Commands and options come from `--help` (recursively; hidden commands from
# the table below). Numeric options are recognised by their type (INT, UINT,
# FLOAT); the cli_checks.h validators show their range ("UINT in [1, 200]",
# "FINITE in [0, 1e+06]"), and a value inside a shown range is valid, so it
# is skipped rather than run. File options are those whose validator says
# FILE / OUTPUT / DIR, plus TEXT options named like files (table below).
#
# Nothing reaches a network: as root the whole walk runs inside a fresh
# network namespace (unshare --net: only a down loopback), so a command that
# wrongly accepts a value cannot send anything; without root the commands
# that open sockets or interfaces (NETWORK below) are skipped and listed.
#
# KNOWN lists cases an owner has confirmed as expected to be fixed (none
# yet): they are reported but do not fail the test.
set -uo pipefail
LAYERSEC=${1:?usage: cli_bad_input.sh /path/to/layersec}
LAYERSEC=$(readlink -f "$LAYERSEC")
PY=/usr/bin/python3

if [[ "${CLI_BAD_INPUT_INNER:-}" != 1 ]]; then
  if [[ "$(id -u)" == 0 ]] && command -v unshare >/dev/null; then
    exec env CLI_BAD_INPUT_INNER=1 CLI_BAD_INPUT_NETNS=1 unshare --net -- bash "$0" "$LAYERSEC"
  fi
  export CLI_BAD_INPUT_INNER=1 CLI_BAD_INPUT_NETNS=0
fi

WORK=$(mktemp -d /tmp/cli_bad_input.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

exec "$PY" - "$LAYERSEC" "$WORK" "${CLI_BAD_INPUT_NETNS:-0}" <<'PYEOF'
import concurrent.futures as cf
import os, re, subprocess, sys

L, W, NETNS = sys.argv[1], sys.argv[2], sys.argv[3] == "1"

# Hidden subcommands (group "") that --help does not list.
HIDDEN = [["someip", "decode"], ["someip", "encode"], ["someip", "pcap"], ["someip", "respond"],
          ["someip", "reassemble"], ["someip", "sd-sim"], ["kem", "ct-check"], ["bench", "scenario-node"]]
# Commands that open sockets, interfaces or namespaces: run only inside our
# own network namespace.
NETWORK = {"node", "macsec up", "sv publish", "sv subscribe", "sv kdc", "bench scenarios", "bench someip",
           "bench dtls", "bench kex", "bench scenario-node"}
# TEXT options that name files: inputs read as regular files, outputs,
# directories, and hex arguments that accept @FILE.
INPUT = {"--config", "--spec", "--cert", "--pcap", "--key", "--key-file", "--sk-pem", "--rsa15360-pem",
         "--chaskey-xcheck", "--services-file"}
OUTPUT = {"--json", "--sk-out"}
DIRS = {"--out", "--work-dir", "--kdc-dir", "--vectors", "--testdata", "--ca", "--state-dir", "--dir"}
AT_FILE = {("kem", "keygen", "--seed"), ("kem", "encaps", "--pk"), ("kem", "encaps", "--seed"),
           ("kem", "encaps", "--m"), ("kem", "decaps", "--sk"), ("kem", "decaps", "--ct"),
           ("someip", "respond", "--services"), ("someip", "encode", "json"), ("someip", "decode", "hex")}
# Options whose output meaning depends on the command.
OUTPUT_BY_CMD = {("macsec", "protect", "--pcap"), ("sv", "pcap", "--out"), ("someip", "pcap", "--out"),
                 ("someip", "sd-sim", "--out")}
# Confirmed by their owners as expected to be fixed: "cmd|option|value".
KNOWN = set()

X25519_PK = "3948cfe0ad1ddb695d780e59077195da6c56506b027329794ab02bca80815c4d"
X25519_SK = "4612c550263fc8ad58375df3f557aac531d26850903e55a9f23f21d8534e8ac8"
X25519_CT = "37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431"

def run(args, timeout=10):
    try:
        p = subprocess.run(["timeout", "-k", "2", str(timeout), L] + args, cwd=W, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        return p.returncode, p.stdout
    except Exception as e:  # noqa
        return 255, str(e)

# ---- fixtures: valid context so that the option under test is what fails ----
os.makedirs(f"{W}/dir", mode=0o700)
FIFO = f"{W}/fifo"
os.mkfifo(FIFO, 0o600)
EMPTY = f"{W}/empty"
open(EMPTY, "w").close()
VICTIM = f"{W}/victim.key"
with open(VICTIM, "w") as f:
    f.write("00112233445566778899aabbccddeeff\n")
os.chmod(VICTIM, 0o600)
def key_file(name, n):
    path = f"{W}/{name}"
    with open(path, "w") as f:
        f.write(bytes(range(n)).hex() + "\n")
    os.chmod(path, 0o600)
    return path
KEY16 = key_file("k16.key", 16)
KEY32 = key_file("k32.key", 32)
rc, out = run(["keys", "ca", "--out", f"{W}/ca", "--name", "walker-ca"], 60)
assert rc == 0, out
rc, out = run(["keys", "issue", "--ca", f"{W}/ca", "--out", f"{W}/ecu", "--name", "n", "--services", "0x1234",
               "--alg", "p256"], 60)
assert rc == 0, out
SVPCAP = f"{W}/sv-fixture.pcap"
rc, out = run(["sv", "pcap", "--out", SVPCAP, "--frames", "2", "--auth", "hmac-sha256", "--key", KEY32], 60)
assert rc == 0, out
SV_AUTH = ["--auth", "hmac-sha256", "--key", KEY32]

# Valid context per command (pairs are dropped when the option under test is
# one of them).
BASE = {
    "keys ca": ["--out", f"{W}/newca", "--name", "c"],
    "keys issue": ["--ca", f"{W}/ca", "--out", f"{W}/newecu", "--name", "m", "--services", "0x1234", "--alg", "p256"],
    "keys show": ["--cert", f"{W}/ecu/n.pem"],
    "keys verify": ["--ca", f"{W}/ca", "--cert", f"{W}/ecu/n.pem"],
    "keys establish": ["--ca", f"{W}/ca", "--publisher", f"{W}/ecu/n", "--subscriber", f"{W}/ecu/n",
                       "--service", "0x1234", "--kem", "x25519"],
    "keys handshake": ["--kem", "x25519", "--iterations", "1"],
    "kem keygen": ["--scheme", "x25519"],
    "kem encaps": ["--scheme", "x25519", "--pk", X25519_PK],
    "kem decaps": ["--scheme", "x25519", "--sk", X25519_SK, "--ct", X25519_CT],
    "kem ct-check": ["--scheme", "ml-kem-512"],
    "macsec protect": ["--key-file", KEY16, "--hex", "00" * 60],
    "macsec validate": ["--key-file", KEY16, "--hex", "00" * 60],
    "sv decode": ["--pcap", SVPCAP] + SV_AUTH,
    "sv pcap": ["--out", f"{W}/sv.pcap", "--frames", "1"] + SV_AUTH,
    "sv publish": ["--iface", "lo", "--count", "1"] + SV_AUTH,
    "sv subscribe": ["--iface", "lo", "--duration", "1"] + SV_AUTH,
    "someip pcap": ["--out", f"{W}/s.pcap", "10.0.0.1:1>10.0.0.2:2=00"],
    "someip sd-sim": ["--out", f"{W}/sd.pcap"],
    "someip decode": ["00"],
    "someip encode": ['{"messages":[]}'],
    "someip respond": ["--services", '{"services":[]}', "00"],
    "someip reassemble": ["00"],
    "secoc describe": ["--config", EMPTY],
    "node": ["--config", EMPTY],
    "macsec up": ["--link", "lo", "--name", "ms0", "--config", EMPTY],
    "bench scenario-node": ["--spec", EMPTY],
    "selftest": [],
    "sv kdc": ["--listen", "127.0.0.1:9", "--dir", f"{W}/kdcdir", "--stream", "0x4000,S,hmac-sha256,p,s",
               "--duration", "1"],
}
# Context for one option that only matters beside others (replaces BASE).
OPT_CONTEXT = {
    ("sv publish", "--kdc-dir"): ["--iface", "lo", "--count", "1", "--auth", "hmac-sha256", "--kdc", "127.0.0.1:9",
                                  "--id", "p"],
    ("kem decaps", "--sk-pem"): ["--scheme", "rsa-2048", "--ct", "00"],
    ("sv subscribe", "--kdc-dir"): ["--iface", "lo", "--duration", "1", "--auth", "hmac-sha256", "--kdc",
                                    "127.0.0.1:9", "--id", "s"],
}

# ---- --help parsing ----
def sections(text):
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\w[\w ]*):\s*$", line)
        if m:
            cur = m.group(1)
            out[cur] = []
        elif cur and line.strip():
            out[cur].append(line)
    return out

def parse_opts(lines, positional=False):
    opts = []
    for line in lines:
        s = line.strip()
        if not positional and not s.startswith("-"):
            continue  # a wrapped description line
        if positional and line.startswith(" " * 8):
            continue
        head = re.split(r"\s{2,}", s, maxsplit=1)[0]
        head = re.split(r" (Needs|Excludes):", head)[0]
        parts = head.split(" ", 1)
        names = parts[0].split(",")
        name = next((n for n in names if n.startswith("--")), names[-1])
        t = parts[1] if len(parts) > 1 else ""
        required = " REQUIRED" in t or t.endswith("REQUIRED")
        multi = t.endswith(" ...") or " ... " in t
        t = t.replace(" REQUIRED", "").replace(" ...", "").strip()
        opts.append({"name": name, "type": t, "required": required, "multi": multi, "positional": positional})
    return opts

def walk():
    cmds, todo = [], [[]]
    seen = set()
    while todo:
        path = todo.pop(0)
        rc, text = run(path + ["--help"], 30)
        sec = sections(text)
        subs = [l.split()[0] for l in sec.get("Subcommands", []) if re.match(r"^  \S", l)]
        for s in subs:
            p = path + [s]
            if tuple(p) not in seen:
                seen.add(tuple(p))
                todo.append(p)
        if path and not subs:
            cmds.append((path, parse_opts(sec.get("Options", [])) + parse_opts(sec.get("Positionals", []), True)))
        if not path:
            for h in HIDDEN:
                if tuple(h) not in seen:
                    seen.add(tuple(h))
                    todo.append(h)
    return cmds

# ---- cases ----
VALUES = ["nan", "inf", "-1", "1e308", "1e-9"]
NUMERIC = {"INT", "UINT", "FLOAT", "NUMBER"}

def numeric_expectation(opt, v):
    """'refuse' or 'skip' (a valid value)."""
    base, _, validator = opt["type"].partition(":")
    if v in ("nan", "inf"):
        return "refuse"
    x = float(v)
    m = re.search(r"in \[([-+\d.e]+), ([-+\d.e]+)\]", validator)
    whole = base in ("INT", "UINT") or validator.startswith("UINT")
    if whole and (x != int(x) or abs(x) > 2**64):
        return "refuse"
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        return "skip" if lo <= x <= hi else "refuse"
    return "refuse"  # no shown range: every one of these values is suspect

def file_kind(cmd, opt):
    key = tuple(cmd) + (opt["name"],)
    t = opt["type"]
    if not t:
        return None  # a flag (e.g. --json meaning "print JSON"), not a path
    if key in AT_FILE:
        return "at"
    if ":OUTPUT" in t or key in OUTPUT_BY_CMD or opt["name"] in OUTPUT:
        return "output"
    if ":DIR" in t or t.endswith("DIR"):
        return "dir"
    if ":FILE" in t or opt["name"] in INPUT:
        return "input"
    if opt["name"] in DIRS:
        return "dir"
    return None

def context(cmd, tested):
    base = list(OPT_CONTEXT.get((" ".join(cmd), tested), BASE.get(" ".join(cmd), [])))
    out, i = [], 0
    while i < len(base):
        a = base[i]
        if a.startswith("--"):
            val = base[i + 1] if i + 1 < len(base) and not base[i + 1].startswith("--") else None
            if a != tested:
                out.append(a)
                if val is not None:
                    out.append(val)
            i += 2 if val is not None else 1
        else:
            if not tested.startswith("--"):  # positional under test replaces the positionals
                i += 1
                continue
            out.append(a)
            i += 1
    return out

cases = []
skipped_network = set()
for cmd, opts in walk():
    name = " ".join(cmd)
    if name in NETWORK and not NETNS:
        skipped_network.add(name)
        continue
    for opt in opts:
        if opt["name"] in ("--help", "-h"):
            continue
        base = opt["type"].partition(":")[0]
        if base in NUMERIC and not opt["positional"]:
            for v in VALUES:
                if numeric_expectation(opt, v) == "refuse":
                    cases.append((name, cmd, opt["name"], v, context(cmd, opt["name"]) + [f"{opt['name']}={v}"], v))
            continue
        kind = file_kind(cmd, opt)
        if kind is None:
            continue
        if kind == "at":
            vals = ["@" + FIFO, "@" + W + "/dir", "@/dev/zero"]
        elif kind == "dir":
            vals = [FIFO, "/dev/zero"]
        else:
            vals = [FIFO, W + "/dir", "/dev/zero"]
        if kind == "output":
            link = f"{W}/link-{len(cases)}"
            os.symlink(VICTIM, link)
            vals.append(link)
        for v in vals:
            arg = [v] if opt["positional"] else [opt["name"], v]
            cases.append((name, cmd, opt["name"], v, context(cmd, opt["name"]) + arg, v.lstrip("@")))

def check(case):
    name, cmd, optname, value, args, path = case
    rc, out = run(cmd + args)
    first = " | ".join(l for l in out.strip().splitlines()[:2])[:220]
    problems = []
    if rc == 124:
        problems.append("hang (timeout 10 s)")
    elif rc >= 128:
        problems.append(f"crash (exit {rc})")
    elif rc == 0:
        problems.append("accepted (exit 0)")
    elif optname not in out and path not in out:
        problems.append("message names neither the option nor the path")
    return name, optname, value, rc, first, problems

workers = 2
results = []
with cf.ThreadPoolExecutor(max_workers=workers) as ex:
    for r in ex.map(check, cases):
        results.append(r)

with open(VICTIM) as f:
    victim_ok = f.read() == "00112233445566778899aabbccddeeff\n"

failed, known = [], []
for name, optname, value, rc, first, problems in results:
    if not problems:
        continue
    key = f"{name}|{optname}|{value.replace(W, '$W')}"
    line = f"{name} {optname} {value.replace(W, '$W')}: {'; '.join(problems)}: exit {rc}: {first.replace(W, '$W')}"
    (known if key in KNOWN else failed).append(line)

if os.environ.get("CLI_BAD_INPUT_VERBOSE") == "2":
    for name, optname, value, rc, first, problems in results:
        print(f"  case {name} {optname} {value.replace(W, '$W')}: exit {rc}: {first.replace(W, '$W')}")
if os.environ.get("CLI_BAD_INPUT_VERBOSE"):
    counts = {}
    for r in results:
        counts[r[0]] = counts.get(r[0], 0) + 1
    for k in sorted(counts):
        print(f"  {counts[k]:4d} cases  {k}")
print(f"cli_bad_input: {len(results)} cases over {len({r[0] for r in results})} commands "
      f"({'inside a private network namespace' if NETNS else 'no namespace: network commands skipped'})")
if skipped_network:
    print("  skipped (need a network namespace): " + ", ".join(sorted(skipped_network)))
for line in known:
    print("  KNOWN " + line)
for line in failed:
    print("  FAIL " + line)
if not victim_ok:
    print("  FAIL an output option followed a symlink and overwrote the file it points to")
ok = not failed and victim_ok
print(f"cli_bad_input: {len(results) - len(failed) - len(known)} ok, {len(failed)} failed, {len(known)} known")
sys.exit(0 if ok else 1)
PYEOF

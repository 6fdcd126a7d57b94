#!/usr/bin/python3
"""Reads the once-a-second {"event": "ptp", ...} lines of `layersec macsec up
--ptp` (tests/cli/ptp_macsec_netns.sh; not a test itself).

  ptp_rows.py count FILE                 number of ptp lines so far
  ptp_rows.py wait FILE TIMEOUT COND     exits 0 once COND holds for the last
                                         line `r` (all lines: `rows`), 1 after
                                         TIMEOUT seconds
  ptp_rows.py eval FILE EXPR [FILE2]     prints EXPR over `rows`/`r` (and
                                         `rows2`/`r2` from FILE2)
  ptp_rows.py exit FILE A.B.C            a value of the exit report (the
                                         pretty-printed JSON object that ends
                                         FILE) by dotted path
Helpers for EXPR: rms(values), since(n) (the lines after the first n),
locked() (the lines after the one in which the servo first stepped: their
offset windows hold only samples of the locked servo),
true_offset(r, g) (slave r's clock minus GM g's clock, both against this
host's CLOCK_REALTIME at nearly the same moment).
"""
import json
import math
import sys
import time


def rows_of(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                if line.startswith('{"'):
                    try:
                        j = json.loads(line)
                    except ValueError:
                        continue  # a line still being written
                    if j.get("event") == "ptp":
                        out.append(j)
    except FileNotFoundError:
        pass
    return out


def rms(values):
    values = [v for v in values if v is not None]
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else float("nan")


def locked(rows):
    first = next((i for i, x in enumerate(rows) if x.get("clock_steps", 0) >= 1), len(rows))
    return rows[first + 1:]


def true_offset(r, g):
    if r.get("offset_to_realtime_ns") is None or g.get("offset_to_realtime_ns") is None:
        return None
    return r["offset_to_realtime_ns"] - g["offset_to_realtime_ns"]


def env(path, path2=None):
    rows = rows_of(path)
    e = {"rows": rows, "r": rows[-1] if rows else {}, "rms": rms, "math": math, "true_offset": true_offset,
         "since": lambda n: rows[n:], "locked": lambda: locked(rows)}
    if path2:
        rows2 = rows_of(path2)
        e.update({"rows2": rows2, "r2": rows2[-1] if rows2 else {}})
    return e


def main(argv):
    mode = argv[1]
    if mode == "count":
        print(len(rows_of(argv[2])))
    elif mode == "wait":
        end = time.monotonic() + float(argv[3])
        while time.monotonic() < end:
            e = env(argv[2])
            try:
                if e["rows"] and eval(argv[4], e):
                    return 0
            except (KeyError, TypeError):
                pass
            time.sleep(0.2)
        return 1
    elif mode == "exit":
        with open(argv[2]) as f:
            text = f.read()
        j = json.loads(text[text.rindex("\n{\n") + 1:])
        for k in argv[3].split("."):
            j = j[k]
        print(j)
    elif mode == "eval":
        print(eval(argv[3], env(argv[2], argv[4] if len(argv) > 4 else None)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""UDP echo for the namespace tests in tests/cli/ (not a test itself).

  udp_echo.py serve IP PORT IDLE_S      echoes every datagram to its sender
                                        until IDLE_S pass without one
  udp_echo.py ping IP PORT N [GAP_S]    sends N numbered datagrams GAP_S
                                        (0.1) apart, then prints how many
                                        distinct ones came back within 3 s (a
                                        loaded machine may delay a wake-up by
                                        milliseconds)
"""
import socket
import sys
import time


def serve(ip, port, idle_s):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, port))
    s.settimeout(idle_s)
    try:
        while True:
            d, a = s.recvfrom(65535)
            s.sendto(d, a)
    except socket.timeout:
        pass


def ping(ip, port, n, gap_s):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = {b"udp echo %d" % i for i in range(n)}
    for i in range(n):
        s.sendto(b"udp echo %d" % i, (ip, port))
        time.sleep(gap_s)
    got = set()
    end = time.time() + 3
    while len(got) < n and time.time() < end:
        s.settimeout(max(0.01, end - time.time()))
        try:
            got.add(s.recvfrom(65535)[0])
        except socket.timeout:
            break
    print(len(got & sent))


if __name__ == "__main__":
    a = sys.argv
    if len(a) == 5 and a[1] == "serve":
        serve(a[2], int(a[3]), float(a[4]))
    elif len(a) in (5, 6) and a[1] == "ping":
        ping(a[2], int(a[3]), int(a[4]), float(a[5]) if len(a) == 6 else 0.1)
    else:
        sys.exit(__doc__)

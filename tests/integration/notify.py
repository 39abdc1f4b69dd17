#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plays systemd's side of sd_notify(3): binds a datagram socket at PATH and
prints every message as "SECONDS<TAB>MESSAGE" (newlines shown as |), with
CLOCK_MONOTONIC seconds, until killed.  Usage: notify.py PATH"""
import os
import socket
import sys
import time

path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
print("listening", flush=True)
while True:
    msg = s.recv(4096).decode("utf-8", "replace")
    print("%.3f\t%s" % (time.monotonic(), msg.replace("\n", "|")), flush=True)

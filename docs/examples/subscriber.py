#!/usr/bin/env python3
"""Follows photod's changes, resuming where it stopped: python3 subscriber.py TOKEN_FILE

Finds photod's socket as photoctl does ($PHOTOD_SOCKET alone; else the per-user socket, then the
system service's), prints each change set as one JSON line, and keeps the token of the last one
in TOKEN_FILE. When photod stops (photod.stopping, photod.reloading) or the connection ends, it
connects to the same socket again and resumes after that token: no change set is missed or
printed twice, across its own restarts and the daemon's."""
import json, os, socket, sys, time

token_file = sys.argv[1]

def sockets():                            # where photoctl looks, in its order
    if os.environ.get("PHOTOD_SOCKET"):
        return [os.environ["PHOTOD_SOCKET"]]
    d = (os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0] or os.environ.get("XDG_RUNTIME_DIR")
         or ("/run/photod" if os.getuid() == 0 else "/tmp/photod-%d" % os.getuid()))
    return [d + "/photod.sock", "/run/photod/photod.sock"]

def connect(paths):                       # the first that accepts: its path and a file on it
    errors = []
    for path in paths:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return path, s.makefile("rwb")
        except OSError as e:
            s.close()
            errors.append(e)
    raise next((e for e in errors if isinstance(e, PermissionError)), errors[0])

def save(token):                          # atomically: the token survives a crash of this script
    with open(token_file + ".tmp", "w") as t: t.write(str(token))
    os.replace(token_file + ".tmp", token_file)

def follow(f):
    """Subscribes after the saved token (from now on the first run) and prints change sets until
    photod says it stops or the connection ends."""
    params = {"since": int(open(token_file).read())} if os.path.exists(token_file) else {}
    f.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "changes.subscribe", "params": params}).encode() + b"\n")
    f.flush()
    for line in f:
        msg = json.loads(line)
        if "error" in msg:                # tokenExpired: refetch what you hold, then resume from currentToken
            sys.exit("photod: %s" % msg["error"]["data"]["detail"])
        if "result" in msg and not params:  # the first run starts from now
            save(msg["result"]["token"])
        if msg.get("method") == "changes":  # one change set, in token order, none missed
            print(json.dumps(msg["params"]), flush=True)
            save(msg["params"]["token"])
        if msg.get("method") == "changes.expired":  # fell behind the journal: refetch, as for tokenExpired
            sys.exit("photod: the journal moved past token %d; refetch" % msg["params"]["token"])
        if msg.get("method") in ("photod.stopping", "photod.reloading"):
            return                        # reconnect and resume from the saved token

paths, delay = sockets(), 0
while True:                               # one connection a turn, until interrupted
    time.sleep(delay)
    delay = min(2 * delay or 0.1, 2)      # 0.1 s, doubling to 2 s, while photod is down
    try:
        path, f = connect(paths)
    except (FileNotFoundError, ConnectionRefusedError):
        continue
    paths, delay = [path], 0              # from now on, that daemon only: its tokens are ours
    try:
        follow(f)
    except (OSError, ValueError):         # the connection broke, perhaps in the middle of a line
        pass
    f.close()

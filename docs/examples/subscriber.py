#!/usr/bin/env python3
"""Follows photod's changes, resuming where it stopped: python3 subscriber.py SOCKET TOKEN_FILE"""
import json, os, socket, sys

sock_path, token_file = sys.argv[1], sys.argv[2]
def save(token):                          # atomically: the token survives a crash of this script
    with open(token_file + ".tmp", "w") as t: t.write(str(token))
    os.replace(token_file + ".tmp", token_file)

params = {"since": int(open(token_file).read())} if os.path.exists(token_file) else {}
s = socket.socket(socket.AF_UNIX); s.connect(sock_path); f = s.makefile("rwb")
f.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "changes.subscribe", "params": params}).encode() + b"\n")
f.flush()
for line in f:
    msg = json.loads(line)
    if "error" in msg:                    # tokenExpired: refetch what you hold, then resume from currentToken
        sys.exit("photod: %s" % msg["error"]["data"]["detail"])
    if "result" in msg and not params:    # the first run starts from now
        save(msg["result"]["token"])
    if msg.get("method") == "changes":    # one change set, in token order, none missed
        print(json.dumps(msg["params"]), flush=True)
        save(msg["params"]["token"])
    if msg.get("method") == "changes.expired":  # fell behind the journal: refetch, as for tokenExpired
        sys.exit("photod: the journal moved past token %d; refetch" % msg["params"]["token"])

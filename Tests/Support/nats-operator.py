#!/usr/bin/env python3
"""A NATS operator, one account and one user, as `nsc` would make them (Debian has no nsc), for
the bridge's --creds test: writes DIR/server.conf (operator mode, the account and a system
account preloaded, with JetStream enabled by the server's command line, -js) and DIR/user.creds (the user's JWT and
NKey seed).

    nats-operator.py DIR

JWTs are NATS's v2 format: base64url header and claims, signed with the issuer's Ed25519 NKey.
Needs python3-cryptography (Ed25519).
"""

import base64
import hashlib
import json
import os
import sys
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

PREFIX = {"operator": 14 << 3, "account": 0, "user": 20 << 3}
SEED = 18 << 3


def crc16(data):
    """CRC-16/XMODEM, as NKeys checksum their keys."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def encode(raw):
    raw += crc16(raw).to_bytes(2, "little")
    return base64.b32encode(raw).decode().rstrip("=")


class NKey:
    def __init__(self, kind):
        self.kind = kind
        self.seed_bytes = os.urandom(32)
        self.private = Ed25519PrivateKey.from_private_bytes(self.seed_bytes)
        public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public = encode(bytes([PREFIX[kind]]) + public)
        p = PREFIX[kind]
        self.seed = encode(bytes([SEED | (p >> 5), (p & 31) << 3]) + self.seed_bytes)


def b64(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(issuer, subject, name, nats):
    claims = {"iat": int(time.time()), "iss": issuer.public, "name": name, "sub": subject.public, "nats": nats}
    claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()).decode().rstrip("=")
    header = b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64(json.dumps(claims).encode())
    signature = issuer.private.sign(f"{header}.{body}".encode())
    return f"{header}.{body}.{b64(signature)}"


def main():
    directory = sys.argv[1]
    operator, account, system, user = NKey("operator"), NKey("account"), NKey("account"), NKey("user")
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1,
                 "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    operator_jwt = jwt(operator, operator, "photod-test", {"type": "operator", "version": 2})
    account_jwt = jwt(operator, account, "photod", {"type": "account", "version": 2, "limits": unlimited})
    # JetStream needs a system account.
    system_jwt = jwt(operator, system, "SYS", {"type": "account", "version": 2,
                                              "limits": {"subs": -1, "data": -1, "payload": -1, "imports": -1,
                                                         "exports": -1, "wildcards": True, "conn": -1, "leaf": -1}})
    user_jwt = jwt(account, user, "bridge", {"type": "user", "version": 2, "pub": {}, "sub": {},
                                             "subs": -1, "data": -1, "payload": -1})
    with open(os.path.join(directory, "operator.jwt"), "w") as f:
        f.write(operator_jwt)
    with open(os.path.join(directory, "server.conf"), "w") as f:
        f.write(f'operator: "{os.path.join(directory, "operator.jwt")}"\nresolver: MEMORY\n'
                f'system_account: {system.public}\n'
                f'resolver_preload: {{ {account.public}: "{account_jwt}", {system.public}: "{system_jwt}" }}\n')
    with open(os.path.join(directory, "user.creds"), "w") as f:
        f.write(f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
                "************************* IMPORTANT *************************\n"
                "NKEY Seed printed below can be used to sign and prove identity.\n"
                "NKEYs are sensitive and should be treated as secrets.\n\n"
                f"-----BEGIN USER NKEY SEED-----\n{user.seed}\n------END USER NKEY SEED------\n\n"
                "*************************************************************\n")
    os.chmod(os.path.join(directory, "user.creds"), 0o600)


if __name__ == "__main__":
    main()

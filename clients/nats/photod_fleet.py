#!/usr/bin/env python3
"""A merged view of every photod publishing into one JetStream stream (docs/DISTRIBUTED.md).

    python3 photod_fleet.py [--nats URL] [--stream PHOTOD] [--durable fleet-view] [--state FILE]
                            [--idle-exit S] [--dump] [--quiet]

Keeps, in the JSON file --state, every library's assets (id -> record) and the change token the
view reflects, for each photod (each subject photod.<name>.changes) in the stream. It reads the
stream with one durable pull consumer, so that after its own restart it goes on where it left
off: a message is acknowledged only after the view it led to is saved (at least once; applying a
change set twice is harmless, a token not newer than the view's is skipped).

Bootstrapping. Made for the first time, the consumer delivers only what is stored from then on;
then every library already in the stream is read whole over NATS request/reply
(photod.<name>.rpc, through its photod-nats), with the token that snapshot reflects. A change
set of a token not newer than that is already in the snapshot; every newer one is applied. A
library that appears later is read when its first change set comes.

Applying a change set: the inserted and updated asset ids are read again (assets.get); the ones
no longer in the library (deleted, in Recently Deleted) leave the view, as do the deleted ids.
A resync event (photod.<name>.resync: change sets were not published), or a gap in a library's
tokens, makes it read that library whole again. A library whose photod or bridge does not answer
holds up only itself: its messages are handed back (nak) and come again in 10 s.

Needs nats-py (pip install nats-py). --idle-exit S exits after S seconds without a message
(tests, cron); --dump prints the view as JSON and exits.
"""

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time

import nats
from nats.errors import TimeoutError as NATSTimeout
from nats.js import api
from nats.js.errors import NotFoundError

# Records per request: about 1 KB each, well under the server's default 1 MiB max_payload (halved
# while an answer is still too large: -32009).
GET_CHUNK = 200
PAGE = 300
TOO_LARGE = -32009


class RPCError(Exception):
    def __init__(self, name, error):
        super().__init__(f"{name}: {error.get('message')} ({error.get('code')})")
        self.code = error.get("code")


class Fleet:
    def __init__(self, nc, js, args):
        self.nc, self.js, self.args = nc, js, args
        self.view = {"libraries": {}}
        if os.path.exists(args.state):
            with open(args.state) as f:
                self.view = json.load(f)
        self.next_id = 1
        # Libraries whose rpc failed in the current batch.
        self.unreachable = set()

    def save(self):
        """Atomically: a crash leaves the previous view or this one, never half of one."""
        directory = os.path.dirname(os.path.abspath(self.args.state))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".fleet-")
        with os.fdopen(fd, "w") as f:
            json.dump(self.view, f, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.args.state)

    async def rpc(self, name, method, params=None):
        """One photod method over NATS, through photod.<name>.rpc."""
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        for attempt in range(5):
            try:
                reply = await self.nc.request(f"photod.{name}.rpc", json.dumps(request).encode(), timeout=30)
            except (NATSTimeout, asyncio.TimeoutError, nats.errors.NoRespondersError) as e:
                # Its bridge restarting, or photod: wait and ask again.
                if attempt == 4:
                    raise RPCError(name, {"message": f"no answer on photod.{name}.rpc: {e!r}", "code": None})
                await asyncio.sleep(1 + attempt)
                continue
            answer = json.loads(reply.data)
            if "error" in answer:
                if answer["error"].get("code") == -32002 and attempt < 4:  # unavailable: photod away
                    await asyncio.sleep(1 + attempt)
                    continue
                raise RPCError(name, answer["error"])
            return answer["result"]

    def log(self, text):
        if not self.args.quiet:
            print(time.strftime("%H:%M:%S ") + text, flush=True)

    async def snapshot(self, name, reason):
        """The whole library and the token it reflects: every id from one snapshot
        (assets.fetchIDs), then their records (assets.get; those that left since are left out,
        and the change sets after the token bring the rest). When the ids do not fit in one
        message (-32009), pages of records by addedDate, read again until all pages agree on
        one token: an asset leaving between two pages would shift the next one past another."""
        try:
            ids = await self.rpc(name, "assets.fetchIDs", {"includeHidden": True, "includeAllBurstAssets": True})
            assets = await self.records(name, ids["ids"])
            token = ids["token"]
        except RPCError as e:
            if e.code != TOO_LARGE:
                raise
            assets, token = await self.pages(name)
        self.view["libraries"][name] = {"token": token, "assets": assets}
        self.log(f"{name}: read whole ({reason}): {len(assets)} assets at token {token}")

    async def records(self, name, ids):
        """The records of `ids` that are in the library now (assets.get, in chunks)."""
        out, chunk, i = {}, GET_CHUNK, 0
        while i < len(ids):
            try:
                got = await self.rpc(name, "assets.get", {"ids": ids[i:i + chunk], "includeHidden": True})
            except RPCError as e:
                if e.code == TOO_LARGE and chunk > 1:
                    chunk //= 2
                    continue
                raise
            for record in got["assets"]:
                out[record["id"]] = record
            i += chunk
        return out

    async def pages(self, name):
        page_size, attempt = PAGE, 0
        while True:
            assets, tokens, offset = {}, set(), 0
            try:
                while offset is not None:
                    page = await self.rpc(name, "assets.fetch", {"sort": "addedDate", "includeHidden": True,
                                                                 "includeAllBurstAssets": True, "limit": page_size, "offset": offset})
                    tokens.add(page["token"])
                    for record in page["assets"]:
                        assets[record["id"]] = record
                    offset = page["nextOffset"]
            except RPCError as e:
                if e.code == TOO_LARGE and page_size > 1:
                    page_size //= 2
                    continue
                raise
            if len(tokens) == 1:
                return assets, tokens.pop()
            attempt += 1
            self.log(f"{name}: the library changed while it was read (tokens {min(tokens)}..{max(tokens)}): again")
            await asyncio.sleep(min(30, attempt))

    async def apply(self, name, change):
        library = self.view["libraries"][name]
        assets = library["assets"]
        for asset_id in change["assets"]["deleted"]:
            assets.pop(asset_id, None)
        wanted = change["assets"]["inserted"] + change["assets"]["updated"]
        found = await self.records(name, wanted)
        for asset_id in wanted:
            if asset_id in found:
                assets[asset_id] = found[asset_id]
            else:
                assets.pop(asset_id, None)  # in Recently Deleted, or purged since
        library["token"] = change["token"]

    async def handle(self, msg):
        parts = msg.subject.split(".")
        if len(parts) != 3 or parts[0] != "photod":
            return
        name, kind = parts[1], parts[2]
        token = int((msg.headers or {}).get("Photod-Token", "0"))
        library = self.view["libraries"].get(name)
        if kind == "resync":
            event = json.loads(msg.data)
            if library is None or token > library["token"]:
                await self.snapshot(name, f"resync: {event.get('reason')}")
            return
        if kind != "changes":
            return
        if library is None:
            await self.snapshot(name, "a new library")
            library = self.view["libraries"][name]
        if token <= library["token"]:
            return  # in the view already (the snapshot, or a redelivery)
        if token != library["token"] + 1:
            # Change sets between the two never reached the stream (its retention dropped them),
            # or photod's numbers jumped after a stop that was not clean: a snapshot is right either way.
            await self.snapshot(name, f"a gap: token {library['token']} then {token}")
            return
        await self.apply(name, json.loads(msg.data))

    def summary(self):
        return ", ".join(f"{name}: {len(l['assets'])} assets (token {l['token']})"
                         for name, l in sorted(self.view["libraries"].items()))


async def consumer(js, args):
    """The durable consumer; made (delivering what is stored from now on) when missing.
    Returns it and whether it is new (the libraries are then read whole)."""
    try:
        await js.consumer_info(args.stream, args.durable)
        new = False
    except NotFoundError:
        await js.add_consumer(args.stream, api.ConsumerConfig(
            durable_name=args.durable, deliver_policy=api.DeliverPolicy.NEW, ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=60, max_ack_pending=1000))
        new = True
    return await js.pull_subscribe_bind(durable=args.durable, stream=args.stream), new


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nats", default="nats://127.0.0.1:4222", help="NATS servers, comma-separated")
    parser.add_argument("--stream", default="PHOTOD")
    parser.add_argument("--durable", default="fleet-view", help="the durable consumer's name")
    parser.add_argument("--state", default="fleet-view.json", help="where the merged view is kept")
    parser.add_argument("--idle-exit", type=float, help="exit after this many seconds without a message")
    parser.add_argument("--dump", action="store_true", help="print the saved view as JSON and exit")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if args.dump:
        with open(args.state) as f:
            print(f.read())
        return
    nc = await nats.connect(servers=args.nats.split(","), max_reconnect_attempts=-1, reconnect_time_wait=0.5)
    js = nc.jetstream()
    fleet = Fleet(nc, js, args)
    sub, new = await consumer(js, args)
    if new or not fleet.view["libraries"]:
        # Every library in the stream now: read whole after the consumer exists, so that no
        # change set falls between a snapshot and the consumer's first message.
        info = await js.stream_info(args.stream, subjects_filter="photod.*.changes")
        for subject in sorted((info.state.subjects or {}).keys()):
            name = subject.split(".")[1]
            try:
                await fleet.snapshot(name, "start")
            except RPCError as e:
                # Read whole when its next change set comes (or its redelivery).
                fleet.log(f"{name}: not read now: {e}")
        fleet.save()
    fleet.log(f"following {args.stream} as {args.durable}: {fleet.summary() or 'no library yet'}")
    stop = asyncio.Event()
    for s in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(s, stop.set)
    last = time.monotonic()
    while not stop.is_set():
        try:
            msgs = await sub.fetch(100, timeout=1)
        except (NATSTimeout, asyncio.TimeoutError):
            if args.idle_exit and time.monotonic() - last > args.idle_exit:
                break
            continue
        if not msgs:
            continue
        last = time.monotonic()
        done, later = [], []
        for msg in msgs:
            name = msg.subject.split(".")[1] if msg.subject.count(".") == 2 else ""
            if name in fleet.unreachable:
                later.append(msg)  # after a failure of its library in this batch: in order, later
                continue
            try:
                await fleet.handle(msg)
                done.append(msg)
            except RPCError as e:
                # That library's photod or bridge is away: the others go on; its messages come
                # again in a while (and a gap in its tokens reads it whole then).
                fleet.log(f"{name}: {e}; again in 10 s")
                fleet.unreachable.add(name)
                later.append(msg)
        fleet.save()  # then acknowledge: a crash between the two redelivers, which is harmless
        for msg in done:
            await msg.ack()
        for msg in later:
            await msg.nak(delay=10)
        fleet.unreachable.clear()
        fleet.log(f"{len(msgs)} message(s): {fleet.summary()}")
    await nc.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except RPCError as e:
        sys.exit(f"photod_fleet: {e}")

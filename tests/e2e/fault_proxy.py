#!/usr/bin/env python3
"""A forwarding TCP proxy for fault tests: delays, stalls and cuts connections on command.

    fault_proxy.py TARGET_PORT PORTS_FILE

Listens on a free port of 127.0.0.1 and forwards every connection to 127.0.0.1:TARGET_PORT.
A second free port takes one command per line and answers "ok" once it applies:

    stall       hold every byte in both directions (the link is frozen; nothing is closed)
    resume      deliver what was held, in order, and forward again
    delay MS    deliver each chunk MS milliseconds after it arrived (0: at once)
    cut         reset every open connection (RST both ways)
    lose-replies N
                the next N connections opened deliver their requests, but every reply to
                them is lost (discarded): a server that did the work, and a client that
                never hears of it
    count       answer "ok N" with the number of open connections

PORTS_FILE receives "LISTEN_PORT CONTROL_PORT" once both listen. Standard library only.
"""

import asyncio
import os
import socket
import struct
import sys


class Proxy:
    def __init__(self, target_port):
        self.target_port = target_port
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.delay = 0.0
        self.pairs = set()
        self.lose_replies = 0

    async def serve_client(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            abort(client_writer)
            return
        pair = (client_writer, server_writer)
        self.pairs.add(pair)
        lose = self.lose_replies > 0
        if lose:
            self.lose_replies -= 1
        try:
            await asyncio.gather(
                self.forward(client_reader, server_writer),
                self.forward(server_reader, client_writer, lose),
            )
        except (ConnectionError, OSError):
            pass
        finally:
            self.pairs.discard(pair)
            abort(client_writer)
            abort(server_writer)

    async def forward(self, reader, writer, lose=False):
        """Copies one direction, chunk by chunk, through the delay and the stall; with
        `lose`, reads and discards."""
        queue = asyncio.Queue()

        async def deliver():
            loop = asyncio.get_running_loop()
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.flowing.wait()
                if data is None:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(deliver())
        loop = asyncio.get_running_loop()
        try:
            while True:
                data = await reader.read(65536)
                if lose and data:
                    continue
                queue.put_nowait((loop.time() + self.delay, data or None))
                if not data:
                    break
            await sender
        finally:
            sender.cancel()

    def cut(self):
        for client_writer, server_writer in list(self.pairs):
            abort(client_writer)
            abort(server_writer)
        self.pairs.clear()

    async def control(self, reader, writer):
        while line := await reader.readline():
            words = line.decode().split()
            reply = "ok"
            if words == ["stall"]:
                self.flowing.clear()
            elif words == ["resume"]:
                self.flowing.set()
            elif len(words) == 2 and words[0] == "delay":
                self.delay = int(words[1]) / 1000.0
            elif words == ["cut"]:
                self.cut()
            elif len(words) == 2 and words[0] == "lose-replies":
                self.lose_replies = int(words[1])
            elif words == ["count"]:
                reply = f"ok {len(self.pairs)}"
            else:
                reply = "error: unknown command " + line.decode().strip()
            writer.write((reply + "\n").encode())
            await writer.drain()
        writer.close()


def abort(writer):
    """Closes with RST: nothing queued is delivered afterwards."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


async def main():
    target_port, ports_file = int(sys.argv[1]), sys.argv[2]
    proxy = Proxy(target_port)
    listener = await asyncio.start_server(proxy.serve_client, "127.0.0.1", 0)
    control = await asyncio.start_server(proxy.control, "127.0.0.1", 0)
    ports = (listener.sockets[0].getsockname()[1], control.sockets[0].getsockname()[1])
    with open(ports_file + ".tmp", "w") as f:
        f.write(f"{ports[0]} {ports[1]}\n")
    os.rename(ports_file + ".tmp", ports_file)
    async with listener, control:
        await asyncio.gather(listener.serve_forever(), control.serve_forever())


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass

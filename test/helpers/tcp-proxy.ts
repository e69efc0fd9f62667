import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL, Redis), to inject an outage: `cut()`
 * drops every connection through it and refuses new ones (each is closed as it arrives) until `restore()`;
 * `freeze()` leaves the connections open but lets nothing through them (a peer gone silent, the kind of
 * outage nothing announces), and refuses new ones, until `restore()`.
 */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  cut(): void;
  freeze(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        open.delete(socket);
        other.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    host: '127.0.0.1',
    port,
    cut() {
      down = true;
      for (const socket of open) socket.destroy();
    },
    freeze() {
      down = true;
      for (const socket of open) socket.pause();
    },
    restore() {
      down = false;
      for (const socket of open) socket.resume();
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A database or Redis URL sent through the proxy instead of straight to its server. */
export function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.hostname = proxy.host;
  url.port = String(proxy.port);
  return url.toString();
}

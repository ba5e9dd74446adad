// A loopback TCP relay whose target can change: a slow-starting proxy in front of it (Prism) serves one server after another.
import { createConnection, createServer, type Socket } from 'node:net';

export interface Relay {
  /** `http://127.0.0.1:port`. */
  url: string;
  /** Where new connections go (`http://host:port`); undefined refuses them. Open connections are cut. */
  retarget(url: string | undefined): void;
  close(): Promise<void>;
}

export async function startRelay(): Promise<Relay> {
  let target: { host: string; port: number } | undefined;
  const open = new Set<Socket>();
  const track = (socket: Socket): void => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const cut = (): void => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  const server = createServer((client) => {
    track(client);
    if (!target) return void client.destroy();
    const upstream = createConnection(target);
    track(upstream);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('the relay has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    retarget(url) {
      cut();
      if (url === undefined) target = undefined;
      else {
        const u = new URL(url);
        target = { host: u.hostname, port: Number(u.port) };
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}

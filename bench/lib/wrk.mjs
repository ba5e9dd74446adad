// Load generation with wrk (C, epoll): for large responses, where autocannon's JavaScript client uses its whole core before the server does.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Why a second load generator: autocannon parses every response in JavaScript, so a 13 KB answer costs the
 * client more than the server (measured at b56f977: autocannon at 100 % of its core, Canon at 53 % of its own),
 * and the ratio it reports is the client's. wrk reads responses in C and stays far below the server's core.
 * Debian packages it (`apt-get install wrk`). The result is shaped like autocannon's, for runLoad's callers.
 */
export function assertWrk() {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error) throw new Error('this benchmark loads with wrk, which is not installed: apt-get install wrk');
}

/** `sh` runs wrk and then prints its own /proc stat, whose cutime/cstime hold what wrk used: the client's CPU. */
const WRAPPER = 'wrk "$@"; status=$?; echo "wrk-stat $(cat /proc/$$/stat)"; exit $status';

function parse(out, duration) {
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(out);
  if (!total) throw new Error(`wrk printed no request count:\n${out}`);
  const requests = Number(total[1]);
  const bytes = /requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB)/.exec(out);
  const scale = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) : 0;
  const timeouts = socket ? Number(socket[4]) : 0;
  const stat = /wrk-stat .*\) (.*)$/m.exec(out)?.[1].split(' ');
  const ticks = stat ? Number(stat[13]) + Number(stat[14]) : undefined;
  const perSecond = requests / duration;
  return {
    requests: { total: requests, average: perSecond, stddev: 0, min: perSecond, max: perSecond },
    throughput: { total: bytes ? Number(bytes[1]) * scale[bytes[2]] : 0, average: bytes ? (Number(bytes[1]) * scale[bytes[2]]) / duration : 0 },
    latency: {},
    '2xx': requests - non2xx,
    non2xx,
    errors,
    timeouts,
    resets: 0,
    statusCodeStats: {},
    duration,
    // Clock ticks of 1/100 s (Linux USER_HZ): the wrapper's waited-for children, i.e. wrk.
    clientCpuSeconds: ticks === undefined ? undefined : ticks / 100,
  };
}

/**
 * A Lua script giving every request `load.method` and `load.body` (wrk sends GETs without one), written once per
 * distinct pair into the temporary directory. The body goes in as a Lua long string, which needs no escaping.
 */
function requestScript(load) {
  const text = `wrk.method = ${JSON.stringify(load.method ?? 'GET')}\nwrk.body = [==[${load.body ?? ''}]==]\n`;
  if (text.split(']==]').length > 2) throw new Error('a wrk request body may not contain ]==]');
  const file = path.join(os.tmpdir(), `canon-bench-wrk-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.lua`);
  if (!existsSync(file)) writeFileSync(file, text);
  return file;
}

/** One wrk run of `seconds` with `load.connections` connections on one thread (the client's core). */
export function runWrk(title, load, seconds, connections) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', `${load.timeout ?? 10}s`];
  for (const [name, value] of Object.entries(load.headers ?? {})) args.push('-H', `${name}: ${value}`);
  if (load.method !== undefined || load.body !== undefined) args.push('-s', requestScript(load));
  args.push(load.url);
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', WRAPPER, 'wrk', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), (seconds + 40) * 1000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      if (code !== 0) reject(new Error(`${title}: wrk exited with ${code}:\n${out}`));
      else {
        try {
          resolve(parse(out, seconds));
        } catch (err) {
          reject(err);
        }
      }
    });
  });
}

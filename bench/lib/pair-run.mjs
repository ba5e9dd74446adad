// Two Canon processes side by side, each on its own fresh SQLite file, measured in alternating slices: the pair every A/B benchmark of a setting runs.
import path from 'node:path';
import { reportProfile, startCanon } from './canon.mjs';
import { measureInterleaved } from './interleave.mjs';
import { makeTempDir, removeTempDir, withServer } from './processes.mjs';

/**
 * `configs`: two `{ key, label, prepare(base) → { load, check? }, ...rest }`; `startOptions(config)` gives what
 * differs between the two Canon processes (`{ rateLimit }`, `{ env }`). Both run on the server core; each
 * `prepare` checks its server and returns its load; then both are measured in alternating slices
 * (bench/lib/interleave.mjs). Returns `{ [key]: result }`, with `check` and, when profiling, `profile`.
 */
export async function pairRun({ pinned, run, configs, adminKey, dirPrefix, startOptions }) {
  const dirs = configs.map(() => makeTempDir(dirPrefix));
  try {
    const names = configs.map((c) => `canon-${c.key}-${run}`);
    const start = (i) => (port) =>
      startCanon(port, { databaseUrl: `sqlite:${path.join(dirs[i], 'canon.db')}`, adminKey, pinned, profileName: names[i], ...startOptions(configs[i]) });
    const results = await withServer(start(0), (serverA, baseA) =>
      withServer(start(1), async (serverB, baseB) => {
        const [prepA, prepB] = [await configs[0].prepare(baseA), await configs[1].prepare(baseB)];
        const measured = await measureInterleaved([
          { server: serverA, load: prepA.load, label: configs[0].label, name: names[0] },
          { server: serverB, load: prepB.load, label: configs[1].label, name: names[1] },
        ]);
        return [
          { ...measured[0], check: prepA.check },
          { ...measured[1], check: prepB.check },
        ];
      }),
    );
    return Object.fromEntries(
      configs.map((c, i) => {
        const profile = reportProfile(names[i]);
        return [c.key, profile ? { ...results[i], profile } : results[i]];
      }),
    );
  } finally {
    for (const dir of dirs) removeTempDir(dir);
  }
}

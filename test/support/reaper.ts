// Child processes a test file starts die with it: a file the runner times out and ends must not leave servers running.
import type { ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
let installed = false;

function reapAll(): void {
  for (const child of children) {
    // A detached child leads its own process group (a shell and what it started): the group goes with it.
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Not a group leader: the child alone.
      }
    }
    child.kill('SIGKILL');
  }
  children.clear();
}

/**
 * Kills `child` when this process exits or is told to stop (the test runner ends a file past its timeout with a
 * signal; its own children would otherwise be orphans that hold ports and CPU for the rest of the run).
 */
export function reapOnExit<T extends ChildProcess>(child: T): T {
  if (!installed) {
    installed = true;
    process.once('exit', reapAll);
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.once(signal, () => {
        reapAll();
        process.exit(1);
      });
    }
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

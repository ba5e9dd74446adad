// Baseline servers' exit: on SIGINT/SIGTERM, or when the benchmark that started them goes away (their stdin closes).

/** Runs `stop` once when the process is told to stop or orphaned, so no baseline outlives its benchmark. */
export function stopWithParent(stop) {
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    stop();
  };
  process.once('SIGINT', once);
  process.once('SIGTERM', once);
  if (!process.stdin.isTTY) {
    process.stdin.on('end', once);
    process.stdin.on('error', once);
    process.stdin.resume();
  }
}

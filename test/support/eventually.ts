// Polls a condition until it holds or a deadline passes: for what becomes visible asynchronously (events stamped after commit on PostgreSQL).
export async function eventually<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

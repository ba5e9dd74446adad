// Runs WebhookSender in its own process for sender tests: Node reads NODE_EXTRA_CA_CERTS only at start, so the test CA is trusted here and nowhere else.
// Reads a JSON job on stdin, prints one line of JSON: the registration verdict (when asked) and one outcome per send, in order.
import { urlVerdict, type Resolver, type UrlPolicy, type Verdict } from '../../src/webhooks/address-policy.js';
import { WebhookSender, type SendInput, type SendOutcome } from '../../src/webhooks/sender.js';

export interface SendJob {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
  connectionsPerOrigin?: number;
  /** A fake resolver: the nth lookup answers resolutions[n] (the last one again afterwards). Absent: the system resolver. */
  resolutions?: string[][];
  /** A URL to check with urlVerdict first, as registration does. */
  register?: string;
  sends: SendInput[];
}

export interface SendResult {
  registration?: Verdict;
  outcomes: SendOutcome[];
  /** Every name the fake resolver was asked for, in order. */
  lookups: string[];
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += (chunk as Buffer).toString('utf8');
  return text;
}

async function main(): Promise<void> {
  const job = JSON.parse(await readStdin()) as SendJob;
  const lookups: string[] = [];
  let resolve: Resolver | undefined;
  if (job.resolutions) {
    const answers = job.resolutions;
    resolve = async (hostname) => {
      lookups.push(hostname);
      return answers[Math.min(lookups.length - 1, answers.length - 1)]!;
    };
  }
  const policy: UrlPolicy = resolve ? { allowPrivate: job.allowPrivate, resolve } : { allowPrivate: job.allowPrivate };
  const result: SendResult = { outcomes: [], lookups };
  if (job.register) result.registration = await urlVerdict(job.register, policy);
  const sender = new WebhookSender({ policy, timeoutMs: job.timeoutMs, maxResponseBytes: job.maxResponseBytes, connectionsPerOrigin: job.connectionsPerOrigin });
  try {
    for (const input of job.sends) result.outcomes.push(await sender.send(input));
  } finally {
    await sender.close();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

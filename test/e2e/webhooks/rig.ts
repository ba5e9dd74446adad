// The webhook end-to-end rig: a test CA, a real HTTPS receiver trusting nothing else, a scratch store and a Canon process that trusts the CA.
import { CertDir } from '../../support/certs.js';
import { ADMIN_KEY } from '../../support/harness.js';
import { startCanon, type CanonProcess } from '../../support/processes.js';
import { scratchStore, type Scratch, type StoreKind } from './api.js';
import { Receiver } from './receiver.js';

export interface WebhookRig {
  receiver: Receiver;
  canon: CanonProcess;
  close(): Promise<void>;
}

/** Starts the rig on a fresh `store`; `env` adds to (or overrides) what every webhook test needs. */
export async function startWebhookRig(store: StoreKind, secret: string, env: Record<string, string>): Promise<WebhookRig> {
  const certs = new CertDir();
  const ca = certs.ca('ca', 'Canon Test Webhook CA');
  const receiver = await Receiver.start(certs.leaf('receiver', 'localhost', 'server', ca));
  let scratch: Scratch | undefined;
  let canon: CanonProcess | undefined;
  const close = async (): Promise<void> => {
    await canon?.stop();
    await receiver.close();
    await scratch?.remove();
    certs.remove();
  };
  try {
    scratch = await scratchStore(store);
    canon = await startCanon({
      DATABASE_URL: scratch.databaseUrl,
      CANON_ADMIN_API_KEY: ADMIN_KEY,
      CANON_SECRET: secret,
      // Node reads it only at start: the Canon child trusts the test CA, this process never needs to.
      NODE_EXTRA_CA_CERTS: ca.certFile,
      CANON_WEBHOOK_ALLOW_PRIVATE: '1',
      CANON_EVENT_POLL_MS: '100',
      ...env,
    });
  } catch (err) {
    await close();
    throw err;
  }
  return { receiver, canon, close };
}

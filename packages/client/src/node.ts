// canon-client as Node loads it (package.json exports, condition "node"): everything the portable entry exports, with webhook signatures computed by Node's crypto.
import { useHmac } from './webhooks/hmac.js';
import { nodeHmac } from './webhooks/hmac-node.js';

useHmac(nodeHmac);

export * from './index.js';

// Keys that sign bearer tokens (ES256): kept in the store so every process shares them, rotatable, published as a JWKS.
import type { CryptoKey, JWK } from 'jose';
import { v7 as uuidv7 } from 'uuid';
import { SIGNING_KEYS } from '../platform/internal.js';
import type { Commit, Store, StoredRecord } from '../store/types.js';
import { open, seal } from '../lib/key-crypto.js';
import { jose } from './jose.js';

export const TOKEN_ALG = 'ES256';
/** Keys are re-read from the store at most this often, so a rotation by one process reaches the others. */
const REFRESH_MS = 30_000;

interface LoadedKey {
  kid: string;
  record: StoredRecord;
  publicKey: CryptoKey;
}

export class SigningKeys {
  private keys: LoadedKey[] = [];
  private loadedAt = -Infinity;
  private active: { kid: string; privateKey: CryptoKey } | undefined;

  constructor(
    private readonly store: Store,
    private readonly secret: string,
    private readonly clock: () => Date,
    /** How long a retired key stays published: longer than any token it signed can live. */
    private readonly retiredGraceSeconds: number,
    /** Rotation goes through the one commit path (ResourceService.commit), like every other change. */
    private readonly commit: Commit = (fn) => store.transaction(fn),
  ) {}

  private async load(force = false): Promise<void> {
    const now = Date.now();
    if (!force && now - this.loadedAt < REFRESH_MS) return;
    const { rows } = await this.store.list(SIGNING_KEYS, {
      where: [],
      orderBy: [
        { path: 'created_at', desc: true },
        { path: 'id', desc: true },
      ],
      limit: 100,
    });
    const { importJWK } = await jose();
    this.keys = await Promise.all(
      rows.map(async (record) => ({ kid: String(record.kid), record, publicKey: (await importJWK(record.public_jwk as JWK, TOKEN_ALG)) as CryptoKey })),
    );
    this.loadedAt = now;
    const current = rows.find((r) => !r.retired_at);
    if (current && this.active?.kid !== current.kid) {
      this.active = { kid: String(current.kid), privateKey: (await importJWK(JSON.parse(open(String(current.private_jwk), this.secret)) as JWK, TOKEN_ALG)) as CryptoKey };
    }
    if (!current) this.active = undefined;
  }

  /** The key new tokens are signed with; the first call on an empty store makes one. */
  async signingKey(): Promise<{ kid: string; privateKey: CryptoKey }> {
    await this.load();
    if (!this.active) {
      await this.create();
      await this.load(true);
    }
    return this.active!;
  }

  /** The public key for a token's `kid`, re-reading the store once if the kid is new to this process. */
  async publicKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (!kid) return undefined;
    await this.load();
    let key = this.keys.find((k) => k.kid === kid);
    if (!key && Date.now() - this.loadedAt > 1000) {
      await this.load(true);
      key = this.keys.find((k) => k.kid === kid);
    }
    return key && this.published(key.record) ? key.publicKey : undefined;
  }

  private published(record: StoredRecord): boolean {
    if (!record.retired_at) return true;
    return Date.parse(String(record.retired_at)) + this.retiredGraceSeconds * 1000 > this.clock().getTime();
  }

  /** RFC 7517 JWK Set of every key whose tokens may still be valid. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.signingKey();
    return { keys: this.keys.filter((k) => this.published(k.record)).map((k) => ({ ...(k.record.public_jwk as JWK), kid: k.kid, alg: TOKEN_ALG, use: 'sig' })) };
  }

  /** Makes a new signing key and retires the current one (still published until its tokens expire). */
  async rotate(): Promise<string> {
    const kid = await this.create();
    await this.load(true);
    return kid;
  }

  private async create(): Promise<string> {
    const { calculateJwkThumbprint, exportJWK, generateKeyPair } = await jose();
    const { publicKey, privateKey } = await generateKeyPair(TOKEN_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const now = this.clock().toISOString();
    await this.commit(async (tx) => {
      const { rows } = await tx.list(SIGNING_KEYS, { where: [{ path: 'retired_at', op: 'eq', value: null }], orderBy: [{ path: 'id', desc: false }], limit: 100 });
      for (const old of rows) await tx.update(SIGNING_KEYS, { ...old, version: old.version + 1, updated_at: now, retired_at: now });
      await tx.insert(SIGNING_KEYS, {
        id: uuidv7(),
        version: 1,
        created_at: now,
        updated_at: now,
        kid,
        alg: TOKEN_ALG,
        public_jwk: publicJwk,
        private_jwk: seal(JSON.stringify(await exportJWK(privateKey)), this.secret),
        retired_at: null,
      });
    });
    return kid;
  }
}

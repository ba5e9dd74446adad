// Test certificates made with the openssl CLI: CAs, a localhost server certificate and client certificates (EC P-256).
import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertFiles {
  certFile: string;
  keyFile: string;
  /** PEM text of the certificate and its key. */
  cert: string;
  key: string;
  /** SHA-256 of the DER certificate, lowercase hex without colons (as Canon stores it). */
  sha256: string;
}

/** Our own minimal openssl config, so the system openssl.cnf never adds or clashes with extensions. */
const CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
`;

export function sha256Of(pem: string): string {
  return new X509Certificate(pem).fingerprint256.replace(/:/g, '').toLowerCase();
}

/** A scratch directory of certificates; `remove()` deletes it. */
export class CertDir {
  readonly dir: string;
  private readonly config: string;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'canon-mtls-'));
    this.config = join(this.dir, 'openssl.cnf');
    writeFileSync(this.config, CONFIG);
  }

  private openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
  }

  private files(name: string): CertFiles {
    const certFile = join(this.dir, `${name}.pem`);
    const keyFile = join(this.dir, `${name}.key`);
    const cert = readFileSync(certFile, 'utf8');
    return { certFile, keyFile, cert, key: readFileSync(keyFile, 'utf8'), sha256: sha256Of(cert) };
  }

  /** A self-signed certificate authority. */
  ca(name: string, commonName: string): CertFiles {
    this.openssl([
      'req',
      '-x509',
      '-new',
      '-config',
      this.config,
      '-extensions',
      'ca_ext',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
    ]);
    return this.files(name);
  }

  /** A leaf certificate signed by `ca`: 'server' (localhost, 127.0.0.1) or 'client'. */
  leaf(name: string, commonName: string, kind: 'server' | 'client', ca: CertFiles): CertFiles {
    this.openssl([
      'req',
      '-new',
      '-config',
      this.config,
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${commonName}`,
    ]);
    this.openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      ca.certFile,
      '-CAkey',
      ca.keyFile,
      '-set_serial',
      `0x${randomBytes(8).toString('hex')}`,
      '-days',
      '2',
      '-sha256',
      '-extfile',
      this.config,
      '-extensions',
      `${kind}_ext`,
      '-out',
      `${name}.pem`,
    ]);
    return this.files(name);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// A self-signed certificate for the TLS tests, made with the openssl CLI (Debian's openssl package).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export function findOpenssl(): string {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' });
    return 'openssl';
  } catch {
    return '';
  }
}

/** A self-signed EC P-256 certificate for 127.0.0.1 and localhost, in `dir`. */
export function makeCertificate(openssl: string, dir: string) {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync(
    openssl,
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'pipe' },
  );
  return { certFile, keyFile };
}

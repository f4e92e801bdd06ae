// Delivery jobs at rest (docs/architecture.md, Persistence): the clear code is never in a
// queue, a Redis value or Redis' append-only file. The notifier seals it with
// AES-256-GCM before queueing and the worker opens it right before sending.
// Every other field of the job is additional authenticated data, so a sealed
// code moved to another job (another address, user, org or link) does not open.
//
// The key is derived (HKDF) from the code HMAC key (CODE_HMAC_KEY, or the data
// folder's code-hmac.key): every gateway and `npm run worker` reads it from the
// same setting, and changing it voids the pending codes anyway, so the jobs
// holding them may stop opening too.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { DeliveryJob, SealedDeliveryJob } from './port.ts';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CodeSeal {
  seal(job: DeliveryJob): SealedDeliveryJob;
  /** The job with its clear code; throws when the key differs or the job was changed. */
  open(job: SealedDeliveryJob): DeliveryJob;
}

export function createCodeSeal(codeHmacKey: string | Buffer): CodeSeal {
  const key = Buffer.from(hkdfSync('sha256', codeHmacKey, '', 'identity-gateway delivery-job code seal v1', 32));
  const aad = (job: Omit<DeliveryJob, 'code'>) =>
    Buffer.from(JSON.stringify([VERSION, job.kind, job.userId, job.orgId, job.to, job.urlTemplate ?? null]));

  return {
    seal(job) {
      const { code, ...rest } = job;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(aad(rest));
      const data = Buffer.concat([cipher.update(code, 'utf8'), cipher.final()]);
      return { ...rest, sealedCode: `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')}` };
    },

    open(job) {
      const { sealedCode, ...rest } = job;
      const [version, body] = typeof sealedCode === 'string' ? sealedCode.split('.') : [];
      if (version !== VERSION || !body) throw new Error('the job holds no sealed code');
      const raw = Buffer.from(body, 'base64url');
      if (raw.length <= IV_BYTES + TAG_BYTES) throw new Error('the sealed code is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(aad(rest));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      let code: string;
      try {
        code = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('the sealed code does not open (another key, or the job was changed)');
      }
      return { ...rest, code };
    },
  };
}

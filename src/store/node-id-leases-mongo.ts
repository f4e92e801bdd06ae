// Node-id leases in a MongoDB collection (node-id-leases.ts says how leases work). Its own
// module, loaded only when MongoDB holds the leases, so the driver stays out of every other
// start; it imports the driver statically (a dynamic import of the CommonJS driver yields its
// exports only as `default` in the bundle the image runs).
import { MongoClient, type Collection } from 'mongodb';
import { UnavailableError } from '../errors.ts';
import { isDuplicate } from './mongo-connection.ts';
import { mongoConcerns } from './mongo-shard-keys.ts';
import type { NodeIdLeaseStore } from './node-id-leases.ts';

interface LeaseDoc {
  _id: number;
  token?: string;
  expiresAt: Date;
  hi: number;
}

export async function createMongoLeaseStore(options: { url: string; dbName: string; collection?: string }): Promise<NodeIdLeaseStore> {
  // A client whose first connect failed never connects again (a MongoDB still starting when the
  // gateway did would leave it without ids for good): until one has connected, each call makes a
  // new one. Once connected, the driver itself reconnects after an outage.
  let closed = false;
  let client: MongoClient | undefined;
  let connected: Promise<Collection<LeaseDoc>> | undefined;
  const connect = async (): Promise<Collection<LeaseDoc>> => {
    if (closed) throw new Error('node-id lease store is closed');
    // Majority-acknowledged like the store's writes: a lease rolled back by a failover could be handed out twice.
    const candidate = new MongoClient(options.url, { serverSelectionTimeoutMS: 2000, maxPoolSize: 2, ...mongoConcerns });
    try {
      await candidate.connect();
    } catch (err) {
      await candidate.close().catch(() => {});
      throw err;
    }
    client = candidate;
    return candidate.db(options.dbName).collection<LeaseDoc>(options.collection ?? 'node_id_leases');
  };
  const collection = () =>
    (connected ??= connect().catch((err: unknown) => {
      connected = undefined;
      throw err;
    }));
  const run = async <T>(op: (leases: Collection<LeaseDoc>) => Promise<T>): Promise<T> => {
    try {
      return await op(await collection());
    } catch (err) {
      if (isDuplicate(err)) throw err;
      throw new UnavailableError(`node-id lease store unavailable: ${(err as Error)?.message ?? err}`, { cause: err });
    }
  };
  const renew = (id: number, token: string, ttlMs: number, ceiling: number) =>
    run(async (leases) => {
      // expiresAt by this gateway's clock, as every holder's: the fence keeps ids apart even when clocks disagree.
      const doc = await leases.findOneAndUpdate(
        { _id: id, token },
        { $set: { expiresAt: new Date(Date.now() + ttlMs) }, $max: { hi: Math.floor(ceiling) } },
        { returnDocument: 'after' },
      );
      return doc ? doc.hi : null;
    });
  return {
    kind: 'mongodb',
    async acquire(id, token, ttlMs, now) {
      const wanted = Math.floor(now) + ttlMs;
      let before: LeaseDoc | null;
      try {
        before = await run((leases) =>
          leases.findOneAndUpdate(
            { _id: id, $or: [{ expiresAt: { $lte: new Date() } }, { token }] },
            { $set: { token, expiresAt: new Date(Date.now() + ttlMs) }, $max: { hi: wanted } },
            { upsert: true, returnDocument: 'before' },
          ),
        );
      } catch (err) {
        if (isDuplicate(err)) return null; // held: the upsert met the existing _id
        throw err;
      }
      const after = before?.hi ?? 0;
      if (after < wanted) return { after, ceiling: wanted };
      // The previous holder's fence is ahead of this clock: make room above it.
      const ceiling = await renew(id, token, ttlMs, after + ttlMs);
      return ceiling === null ? null : { after, ceiling };
    },
    renew,
    async release(id, token, highest) {
      await run((leases) =>
        leases.updateOne({ _id: id, token }, { $set: { hi: Math.floor(highest), expiresAt: new Date(0) }, $unset: { token: '' } }),
      );
    },
    async close() {
      closed = true;
      await connected?.catch(() => {});
      await client?.close().catch(() => {});
    },
  };
}

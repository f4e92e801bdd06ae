import { MongoClient } from 'mongodb';
const c = new MongoClient('mongodb://127.0.0.1:37018/', { serverSelectionTimeoutMS: 2000, ignoreUndefined: true });
const db = c.db('probe');
const ev = db.collection('events');
const t = async (name, f) => { try { console.log(name, JSON.stringify(await f())); } catch (e) { console.log(name, 'ERR', e.constructor.name, e.code, e.message); } };
await ev.insertMany([{ aggregateType: 'user', aggregateId: 'a', sequence: 1 },{ aggregateType: 'user', aggregateId: 'a', sequence: 3 },{ aggregateType: 'user', aggregateId: 'a', sequence: 2 },{ aggregateType: 'user', aggregateId: 'b', sequence: 1 }]);
await t('first', () => ev.aggregate([{ $match: { aggregateType: 'user', aggregateId: { $in: ['a', 'b', 'c'] } } }, {$sort: {aggregateId: 1, sequence: -1}}, { $group: { _id: '$aggregateId', sequence: { $first: '$sequence' } } }]).toArray());
await t('explain', () => ev.find({ aggregateType: 'user', aggregateId: 'a' }).sort({ sequence: -1 }).limit(1).explain());
await c.close();

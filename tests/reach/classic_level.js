// A Node.js program on classic-level (the binding behind the `level` package), as
// JavaScript programs use LevelDB: nothing here knows about leveldb-bloom; the tests
// run it stock and with LD_PRELOAD=libleveldb_bloom.so. classic-level always gives
// its databases leveldb::NewBloomFilterPolicy(10).
//
//     node classic_level.js DIR KEYS
//
// Writes KEYS keys (even ids) in batches in two sessions, each ended by a full
// compaction (session 2 overwrites every 5th key and deletes every 7th), reopens the
// database and reads every written key and as many never written (odd ids) back:
// prints "read: P present, A absent, W wrong" and exits 1 if W > 0.
'use strict';
const crypto = require('crypto');
const { ClassicLevel } = require('classic-level');

const BATCH = 1000;
const OPTIONS = {
  // Holds a whole session: no flush before the compaction, so the background
  // thread never races the writes and the tables are the same in every run.
  writeBufferSize: 64 << 20,
  maxFileSize: 1 << 20,
};

const key = (id) => 'key:' + String(id).padStart(10, '0');
// 48 to 111 bytes, different in each version.
const value = (id, version) => {
  const digest = crypto.createHash('sha512').update(`${id}/${version}`).digest('hex');
  return digest.slice(0, 48 + (id % 64));
};
const fate = (i) => (i % 5 === 0 ? 'overwrite' : i % 7 === 0 ? 'delete' : 'keep');
const open = async (dir) => {
  const db = new ClassicLevel(dir, OPTIONS);
  await db.open();
  return db;
};
// The whole key space: every key starts with "key:", and ';' follows ':'.
const compactAll = (db) => db.compactRange('key:', 'key;');

async function write(dir, keys) {
  let db = await open(dir);
  for (let start = 0; start < keys; start += BATCH) {
    const batch = db.batch();
    for (let i = start; i < Math.min(start + BATCH, keys); i++) batch.put(key(2 * i), value(2 * i, 1));
    await batch.write();
  }
  await compactAll(db);
  await db.close();
  db = await open(dir);
  for (let start = 0; start < keys; start += BATCH) {
    const batch = db.batch();
    for (let i = start; i < Math.min(start + BATCH, keys); i++) {
      if (fate(i) === 'overwrite') batch.put(key(2 * i), value(2 * i, 2));
      if (fate(i) === 'delete') batch.del(key(2 * i));
    }
    await batch.write();
  }
  await compactAll(db);
  await db.close();
}

async function read(dir, keys) {
  const db = await open(dir);
  const counts = { present: 0, absent: 0, wrong: 0 };
  for (let start = 0; start < keys; start += BATCH) {
    const ids = [];
    const expected = [];
    for (let i = start; i < Math.min(start + BATCH, keys); i++) {
      ids.push(2 * i, 2 * i + 1);
      const last = fate(i);
      expected.push(last === 'delete' ? undefined : value(2 * i, last === 'overwrite' ? 2 : 1));
      expected.push(undefined);
    }
    const got = await db.getMany(ids.map(key));
    got.forEach((found, j) => {
      counts[found === undefined ? 'absent' : 'present']++;
      if (found !== expected[j]) {
        counts.wrong++;
        console.error(`wrong: ${key(ids[j])}: ${found} (expected ${expected[j]})`);
      }
    });
  }
  await db.close();
  console.log(`read: ${counts.present} present, ${counts.absent} absent, ${counts.wrong} wrong`);
  if (counts.wrong > 0) process.exitCode = 1;
}

async function main() {
  const [dir, keys] = [process.argv[2], Number(process.argv[3])];
  if (!dir || !(keys > 0)) {
    console.error('usage: node classic_level.js DIR KEYS');
    process.exit(2);
  }
  await write(dir, keys);
  console.log(`wrote ${keys} keys`);
  await read(dir, keys);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

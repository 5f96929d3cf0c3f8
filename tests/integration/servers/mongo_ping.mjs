// Pings the MongoDB-compatible server at MONGODB_URI with the official Node driver from
// tools/node_modules. Usage: node mongo_ping.mjs <repo root>. Exit 0 when { ok: 1 }.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = process.argv[2];
const require = createRequire(join(root, 'tools', 'package.json'));
const { MongoClient } = require('mongodb');

const client = new MongoClient(process.env.MONGODB_URI, {
  serverSelectionTimeoutMS: 5000,
  connectTimeoutMS: 5000,
});
try {
  await client.connect();
  const reply = await client.db(process.env.MONGODB_DATABASE || 'admin').command({ ping: 1 });
  if (reply.ok !== 1) throw new Error(`ping answered ${JSON.stringify(reply)}`);
  console.log('ping ok');
} catch (err) {
  console.error(`mongo ping failed: ${err && err.message}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
